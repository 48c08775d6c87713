export { mysqlUrl, postgresUrl, redisUrl, uniqueSchema } from './services.ts';
export * from './quota-store-contract.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
