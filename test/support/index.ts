export { mysqlUrl, postgresUrl, redisUrl, uniqueSchema } from './services.ts';
export * from './quota-store-contract.ts';
