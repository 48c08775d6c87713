/**
 * @keyset/redis: a GCRA rate-limit store (one EVALSHA per decision, Redis TIME as the
 * clock), quota and in-flight lease stores, a request store that decides a whole request
 * (leases, limits, quotas) in one EVALSHA, and a revocation bus (pub/sub) for running
 * keyset on several instances.
 * @module
 */
export { createRedisConcurrencyStore } from './redis-concurrency-store.ts';
export type { RedisConcurrencyStore, RedisConcurrencyStoreOptions } from './redis-concurrency-store.ts';
export { createRedisQuotaStore } from './redis-quota-store.ts';
export type { RedisQuotaStore, RedisQuotaStoreLogger, RedisQuotaStoreOptions } from './redis-quota-store.ts';
export { createRedisRateLimitStore } from './redis-rate-limit-store.ts';
export type { RedisRateLimitStore, RedisRateLimitStoreOptions, RedisScriptClient } from './redis-rate-limit-store.ts';
export { createRevocationBus } from './revocation-bus.ts';
export type {
  RevocableKeyring,
  RevocationBus,
  RevocationBusLogger,
  RevocationBusOptions,
  RevocationEvent,
  RevocationPublished,
  RevocationPublisher,
  RevocationSubscriber,
} from './revocation-bus.ts';
export { createRedisRequestStore } from './redis-request-store.ts';
export type { RedisRequestStore, RedisRequestStoreOptions } from './redis-request-store.ts';
