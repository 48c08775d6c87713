/**
 * Redis, when `REDIS_URL` is set: one request store for the rate limits, the quotas (their
 * counts flushed to the database every second, and rebuilt from there if Redis loses
 * them) and the in-flight leases (`IN_FLIGHT_MAX`, `OWNER_IN_FLIGHT_MAX`) every instance
 * counts against, which decides a request in one script call and gives its leases back in
 * one more; and the revocation bus that evicts cached keys on every instance before
 * `revoke()` returns. Two connections: a subscribed connection cannot
 * run other commands.
 * A wrong or unreachable `REDIS_URL` stops the start with a clear error; an outage
 * later degrades to per-instance limits (`onStoreError: 'local'`).
 * @module
 */
import type { ConcurrencyStore, Keyring, QuotaStore, RateLimitStore } from '@keyset/core';
import type { DurableQuotaStore } from '@keyset/core/adapter';
import { createRedisRateLimitStore, createRedisRequestStore, createRevocationBus, type RevocationPublished } from '@keyset/redis';
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';

/** What Redis provides to one process. */
export interface RedisServices {
  rateLimitStore: RateLimitStore;
  /** Counts of refused keys per client address, shared by every instance. */
  refusalStore: RateLimitStore;
  quotaStore: QuotaStore;
  /** In-flight leases of keys and owners, shared by every instance. */
  concurrencyStore: ConcurrencyStore;
  close(): Promise<void>;
}

/** `redis://user:secret@host` → `redis://user:***@host`, for messages. */
function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return 'redis://…';
  }
}

/** Connects to Redis and wires the rate-limit store and the revocation bus to `keyring`. */
export async function connectRedis(deps: {
  url: string;
  keyring: Keyring;
  durableQuotas: DurableQuotaStore;
  logger: Logger;
  /** The bus's lag after each publish (`keyset.revocation.lag`), when telemetry is on. */
  onPublished?: (event: RevocationPublished) => void;
}): Promise<RedisServices> {
  const { url, keyring, durableQuotas, logger, onPublished } = deps;
  const log = logger.child({ component: 'redis' });
  // No offline queue: while Redis is away, commands fail at once and the limiter falls
  // back, instead of requests piling up behind a reconnect.
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  const subscriber = redis.duplicate();
  let lastError = '';
  for (const connection of [redis, subscriber]) {
    connection.on('error', (error: Error) => {
      // ioredis repeats the error on every reconnect attempt: log each distinct one once.
      if (error.message !== lastError) log.warn({ err: error }, 'redis connection error');
      lastError = error.message;
    });
    connection.on('ready', () => {
      if (lastError !== '') log.info('redis connection ready');
      lastError = '';
    });
  }
  try {
    await Promise.all([redis.connect(), subscriber.connect()]);
    const bus = createRevocationBus({ publisher: redis, subscriber, keyring, logger: log, ...(onPublished === undefined ? {} : { onPublished }) });
    await bus.ready;
    // One store for limits, quotas and leases: the limiter and the in-flight limit given
    // the same object decide each request in one call.
    const requestStore = createRedisRequestStore({ redis, durable: durableQuotas, logger: log });
    return {
      rateLimitStore: requestStore,
      refusalStore: createRedisRateLimitStore({ redis, prefix: 'keyset:refused:' }),
      quotaStore: requestStore,
      concurrencyStore: requestStore,
      async close() {
        await bus.close().catch(() => undefined);
        // The last flush of quota counts, while Redis and the database are still open.
        await requestStore.close().catch((error: unknown) => log.warn({ err: error }, 'last quota flush failed'));
        await Promise.allSettled([redis.quit(), subscriber.quit()]);
      },
    };
  } catch (error) {
    redis.disconnect();
    subscriber.disconnect();
    // ioredis rejects `connect()` with "Connection is closed." after the socket failed; the
    // socket's own error (ECONNREFUSED, ENOTFOUND, a TLS or auth failure) is the cause a
    // reader can act on.
    const reason = lastError !== '' ? lastError : (error as Error).message;
    throw new Error(`cannot connect to REDIS_URL (${redactRedisUrl(url)}): ${reason}`, { cause: error });
  }
}
