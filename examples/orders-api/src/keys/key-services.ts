/**
 * The keyring over the PostgreSQL key store, the per-key GCRA limiter and the guard
 * the routes use. Memory rate-limit state by default; with `REDIS_URL`, rate limits,
 * quotas and revocations go through Redis so several instances share them. With
 * `DATABASE_URL`, revocations also go through PostgreSQL `LISTEN/NOTIFY`, so instances
 * without Redis (or while Redis is down) still evict a revoked key before the admin
 * route answers. In-flight caps (`IN_FLIGHT_MAX`, `OWNER_IN_FLIGHT_MAX`) are the guard's
 * too, so every adapter's server gets them. Every limiter decision is counted by the usage
 * counter, which writes its deltas to the same database every `USAGE_FLUSH_MS`.
 * @module
 */
import {
  createApiKeyGuard,
  createConcurrencyLimit,
  createKeyring,
  createMemoryRateLimitStore,
  createRateLimiter,
  createUsageCounter,
  type ApiKeyGuard,
  type Keyring,
  type KeyStore,
  type RateLimiterWithState,
  type UsageCounter,
  type UsageStore,
} from '@keyset/core';
import type { KeysetTelemetry } from '@keyset/opentelemetry';
import { createPostgresKeyStore, createPostgresQuotaStore, createPostgresUsageStore } from '@keyset/postgres';
import type { Config } from '../config.ts';
import type { Database, SqlClient } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { connectPostgresBus, type PostgresBus } from './postgres-bus.ts';
import { connectRedis, type RedisServices } from './redis-services.ts';

/** Realm of the `WWW-Authenticate: ApiKey realm="orders-api"` challenge. */
export const REALM = 'orders-api';

/** The key machinery of one process. */
export interface KeyServices {
  store: KeyStore;
  keyring: Keyring;
  limiter: RateLimiterWithState;
  guard: ApiKeyGuard;
  /**
   * Usage counts per key and owner: the store the counter writes, the same table through
   * the usage reads' own connections and limit (`Database.usageReads`) for the admin
   * routes, and the counter the limiter feeds.
   */
  usage: { store: UsageStore; reads: UsageStore; counter: UsageCounter };
  /** Flushes `lastUsedAt` and the usage counts, stops the buses, flushes quota counts, then disconnects Redis. Never closes the database. */
  close(): Promise<void>;
}

/** Builds the key services on `db` (which the caller owns and closes). */
export async function createKeyServices(deps: {
  db: SqlClient & Pick<Database, 'connectListener' | 'usageReads'>;
  config: Pick<Config, 'keyPrefix' | 'keyPepper' | 'rateLimit' | 'redisUrl' | 'trustProxy'> &
    Partial<Pick<Config, 'refusedKeyLimit' | 'rateLimitHeaders' | 'inFlightMax' | 'ownerInFlightMax' | 'inFlightLeaseSeconds' | 'keySchemes' | 'usageFlushMs'>>;
  logger: Logger;
  /** keyset's metrics and spans (src/telemetry.ts): every store, the keyring, the limiter's decisions and the guard go through it. */
  telemetry?: KeysetTelemetry;
}): Promise<KeyServices> {
  const { db, config, logger, telemetry } = deps;
  // Each store by a name of its own: store-call latency and failures by store and operation.
  const observe = <T extends object>(name: string, store: T): T => (telemetry === undefined ? store : telemetry.store(name, store));
  const store = observe('keys', createPostgresKeyStore({ client: db }));
  const keyring = createKeyring({
    store,
    prefix: config.keyPrefix,
    realm: REALM,
    // KEY_SCHEMES: where requests may carry their key (ApiKey by default).
    ...(config.keySchemes === undefined ? {} : { schemes: config.keySchemes }),
    logger: logger.child({ component: 'keyring' }),
    ...(telemetry === undefined ? {} : { onCacheLookup: telemetry.onCacheLookup }),
    ...(config.keyPepper === undefined ? {} : typeof config.keyPepper === 'string' ? { pepper: config.keyPepper } : { peppers: config.keyPepper }),
  });
  // Quota counts live with the keys in the database (shared by every instance, kept
  // across restarts). With REDIS_URL the live count is in Redis and this store is its
  // durable copy, flushed every second: a Redis that loses its data hands back at most
  // one second's spending (docs/rate-limits.md, "Quotas").
  const quotaStore = observe('quotas', createPostgresQuotaStore({ client: db }));
  let redis: RedisServices | undefined;
  let bus: PostgresBus | undefined;
  try {
    const { connectListener } = db;
    // The buses' lag (keyset.revocation.lag) when telemetry is on.
    const onPublished = telemetry === undefined ? {} : { onPublished: telemetry.onRevocationPublished };
    bus = connectListener === undefined ? undefined : await connectPostgresBus({ db, connectListener, keyring, logger, ...onPublished });
    redis = config.redisUrl === undefined ? undefined : await connectRedis({ url: config.redisUrl, keyring, durableQuotas: quotaStore, logger, ...onPublished });
  } catch (error) {
    await bus?.close();
    await keyring.close().catch(() => undefined);
    throw error;
  }
  // Usage per key and owner, in the database beside the keys: each instance adds its
  // decisions up in memory and writes them in one statement per flush, so no request
  // writes and several instances add up exactly (docs/usage.md).
  const usageStore = observe('usage', createPostgresUsageStore({ client: db }));
  const usage = createUsageCounter({
    store: usageStore,
    flushIntervalMs: config.usageFlushMs ?? 5_000,
    logger: logger.child({ component: 'usage' }),
    ...(telemetry === undefined ? {} : { onFlush: telemetry.onUsageFlush }),
  });
  const limiter = createRateLimiter({
    onDecision: telemetry === undefined ? usage.record : telemetry.onDecision(usage.record),
    defaultPolicy: { ...config.rateLimit, name: 'default' },
    // RATE_LIMIT_HEADERS: draft-11 by default; draft-7 and legacy for clients that read those.
    ...(config.rateLimitHeaders === undefined ? {} : { headers: config.rateLimitHeaders }),
    // Redis down: each instance limits on its own rather than refusing or waving through.
    onStoreError: 'local',
    logger: logger.child({ component: 'rate-limit' }),
    quotaStore: redis === undefined ? quotaStore : observe('redis.quotas', redis.quotaStore),
    ...(redis === undefined ? (telemetry === undefined ? {} : { store: observe('ratelimit', createMemoryRateLimitStore()) }) : { store: observe('redis.ratelimit', redis.rateLimitStore) }),
  });
  // Refused keys per client address (60/min by default): past it, 429 before any lookup,
  // so a client without a valid key cannot keep the database busy. Shared with REDIS_URL.
  const refusedKeyLimit = config.refusedKeyLimit ?? { limit: 60, windowSeconds: 60 };
  // In-flight caps (IN_FLIGHT_MAX per key, OWNER_IN_FLIGHT_MAX per owner; off by default):
  // leases in Redis with REDIS_URL, so the cap holds across instances, else in memory.
  const { inFlightMax = false, ownerInFlightMax = false, inFlightLeaseSeconds = 60 } = config;
  const concurrency =
    inFlightMax === false && ownerInFlightMax === false
      ? undefined
      : createConcurrencyLimit({
          ...(inFlightMax === false ? {} : { max: inFlightMax }),
          ...(ownerInFlightMax === false ? {} : { ownerMax: ownerInFlightMax }),
          leaseTtlSeconds: inFlightLeaseSeconds,
          // Redis down: serve without the cap (rate limits still hold per instance) rather
          // than answer every request 503; an instance's own memory cannot see the others'.
          onStoreError: 'open',
          // ...and say so, once per outage: the cap is not enforced until Redis answers.
          logger: logger.child({ component: 'in-flight' }),
          ...(redis === undefined ? {} : { store: observe('redis.leases', redis.concurrencyStore) }),
        });
  const checked = createApiKeyGuard({
    keyring: telemetry === undefined ? keyring : telemetry.keyring(keyring),
    limiter,
    trustProxy: config.trustProxy,
    refusedCredentials:
      refusedKeyLimit === false
        ? false
        : { ...refusedKeyLimit, logger: logger.child({ component: 'refused-credentials' }), ...(redis === undefined ? {} : { store: observe('redis.refusals', redis.refusalStore) }) },
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  const guard = telemetry === undefined ? checked : telemetry.guard(checked);
  let closing: Promise<void> | undefined;
  return Object.freeze({
    store,
    keyring,
    limiter,
    guard,
    usage: { store: usageStore, reads: createPostgresUsageStore({ client: db.usageReads }), counter: usage },
    close: () =>
      (closing ??= (async () => {
        try {
          await keyring.close();
        } finally {
          // Before the database closes: the last interval's counts are written, not lost.
          await usage.close();
          await bus?.close();
          await redis?.close();
        }
      })()),
  });
}
