export { mysqlUrl, postgresUrl, redisUrl, uniqueSchema } from './services.ts';
export * from './quota-store-contract.ts';
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
export { MANGLES, keyFrom, mangleKey, mangledKey, secretLeak, type Mangle } from './mangled-keys.ts';
export { leaseCommand, runLeaseCommands, type LeaseCommand } from './concurrency-store-contract.ts';
export { copyPgliteDataDir, createPglite } from './pglite.ts';
export { freePort, killRedis, ownRedisAvailable, startRedis } from './own-redis.ts';
export * from './usage-store-contract.ts';
export { redisLeaseStore } from './redis-lease-store.ts';
