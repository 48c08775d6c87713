/**
 * The keyring over the PostgreSQL key store, the per-key GCRA limiter and the guard
 * the routes use. Memory rate-limit state by default; with `REDIS_URL`, rate limits and
 * revocations go through Redis so several instances share them.
 * @module
 */
import { createApiKeyGuard, createKeyring, createRateLimiter, type ApiKeyGuard, type Keyring, type KeyStore, type RateLimiterWithState } from '@keyset/core';
import { createPostgresKeyStore, createPostgresQuotaStore } from '@keyset/postgres';
import type { Config } from '../config.ts';
import type { SqlClient } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { connectRedis, type RedisServices } from './redis-services.ts';

/** Realm of the `WWW-Authenticate: ApiKey realm="orders-api"` challenge. */
export const REALM = 'orders-api';

/** The key machinery of one process. */
export interface KeyServices {
  store: KeyStore;
  keyring: Keyring;
  limiter: RateLimiterWithState;
  guard: ApiKeyGuard;
  /** Flushes `lastUsedAt`, then disconnects Redis. Never closes the database. */
  close(): Promise<void>;
}

/** Builds the key services on `db` (which the caller owns and closes). */
export async function createKeyServices(deps: {
  db: SqlClient;
  config: Pick<Config, 'keyPrefix' | 'keyPepper' | 'rateLimit' | 'redisUrl' | 'trustProxy'>;
  logger: Logger;
}): Promise<KeyServices> {
  const { db, config, logger } = deps;
  const store = createPostgresKeyStore({ client: db });
  const keyring = createKeyring({
    store,
    prefix: config.keyPrefix,
    realm: REALM,
    logger: logger.child({ component: 'keyring' }),
    ...(config.keyPepper === undefined ? {} : { pepper: config.keyPepper }),
  });
  let redis: RedisServices | undefined;
  try {
    redis = config.redisUrl === undefined ? undefined : await connectRedis({ url: config.redisUrl, keyring, logger });
  } catch (error) {
    await keyring.close().catch(() => undefined);
    throw error;
  }
  const limiter = createRateLimiter({
    defaultPolicy: { ...config.rateLimit, name: 'default' },
    // Redis down: each instance limits on its own rather than refusing or waving through.
    onStoreError: 'local',
    logger: logger.child({ component: 'rate-limit' }),
    // Quota counts live with the keys in the database (shared by every instance, kept
    // across restarts), or in Redis with REDIS_URL.
    quotaStore: redis?.quotaStore ?? createPostgresQuotaStore({ client: db }),
    ...(redis === undefined ? {} : { store: redis.rateLimitStore }),
  });
  const guard = createApiKeyGuard({ keyring, limiter, trustProxy: config.trustProxy });
  let closing: Promise<void> | undefined;
  return Object.freeze({
    store,
    keyring,
    limiter,
    guard,
    close: () =>
      (closing ??= (async () => {
        try {
          await keyring.close();
        } finally {
          await redis?.close();
        }
      })()),
  });
}
