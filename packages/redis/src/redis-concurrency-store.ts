/**
 * In-flight leases on Redis, shared by every instance: one `EVALSHA` to take a lease, one to give it back, one per renewal of a
 * request still at work. Each holder's leases are a
 * sorted set `<prefix>{<holder>}` scored by expiry in Redis `TIME` (a key's leases sit in
 * the partition the limit gives, `<prefix>{owner:<id>}:key:<id>` or `<prefix>{<id>}:key:<id>`,
 * beside its other counts, so that one script can decide a request on a Redis Cluster), so an instance that
 * died leaves leases that stop counting at their expiry, and the set itself expires with
 * its last lease.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, createSilenceWatch, type KnownOptions } from '@keyset/core/adapter';
import type { ConcurrencyStore, LeaseDecision } from '@keyset/core';
import { ACQUIRE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from './internal/lease-scripts.ts';
import { sha1Hex } from './internal/sha1.ts';
import type { RedisScriptClient } from './redis-rate-limit-store.ts';

/** Options of `createRedisConcurrencyStore`. */
export interface RedisConcurrencyStoreOptions {
  /** The ioredis client (or anything with `evalsha`/`eval`). The store never closes it. */
  redis: RedisScriptClient;
  /**
   * Prefix of every key. Must not contain `{` or `}` (they would move the hash tag).
   * @default 'keyset:inflight:'
   */
  prefix?: string;
  /**
   * How long Redis may stay silent while a call waits (as the rate-limit store's); past
   * it the limit's `onStoreError` (`createConcurrencyLimit`) decides.
   * @default 500
   */
  timeoutMs?: number;
}

const STORE_OPTIONS = { redis: true, prefix: true, timeoutMs: true } as const satisfies KnownOptions<RedisConcurrencyStoreOptions>;

/** The Redis lease store; both calls answer asynchronously. */
export interface RedisConcurrencyStore extends ConcurrencyStore {
  acquire(holder: string, leaseId: string, max: number, ttlMs: number, partition?: string): Promise<LeaseDecision>;
  release(holder: string, leaseId: string, partition?: string): Promise<void>;
  renew(holder: string, leaseId: string, ttlMs: number, partition?: string): Promise<boolean>;
  /** The Redis key of a holder's leases, for operators and tests; with `partition`, inside that hash tag. */
  keyOf(holder: string, partition?: string): string;
}

/**
 * Creates a lease store shared by every instance that uses the same Redis.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const guard = createApiKeyGuard({ keyring, concurrency: createConcurrencyLimit({ max: 5, store: createRedisConcurrencyStore({ redis }) }) });
 * ```
 */
export function createRedisConcurrencyStore(options: RedisConcurrencyStoreOptions): RedisConcurrencyStore {
  assertKnownOptions('createRedisConcurrencyStore', options, STORE_OPTIONS);
  const { redis, prefix = 'keyset:inflight:', timeoutMs = 500 } = options;
  if (typeof redis?.evalsha !== 'function' || typeof redis.eval !== 'function') {
    throw new ConfigError('createRedisConcurrencyStore needs `redis`: an ioredis client (evalsha and eval)');
  }
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) throw new ConfigError(`prefix must be a string without { or }, got ${JSON.stringify(prefix)}`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const watch = createSilenceWatch(timeoutMs, 'Redis concurrency store');
  const shas = Promise.all([sha1Hex(ACQUIRE_SCRIPT), sha1Hex(RELEASE_SCRIPT), sha1Hex(RENEW_SCRIPT)]);

  const keyOf = (holder: string, partition?: string): string =>
    partition === undefined || partition === holder ? `${prefix}{${holder}}` : `${prefix}{${partition}}:${holder}`;

  async function run(script: string, which: 0 | 1 | 2, key: string, args: (string | number)[]): Promise<unknown> {
    const sha = (await shas)[which];
    try {
      return await redis.evalsha(sha, 1, key, ...args);
    } catch (error) {
      // Script cache flushed or a fresh server: EVAL runs it and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(script, 1, key, ...args);
    }
  }

  async function acquire(holder: string, leaseId: string, max: number, ttlMs: number, partition?: string): Promise<LeaseDecision> {
    const reply = await watch.wait(run(ACQUIRE_SCRIPT, 0, keyOf(holder, partition), [leaseId, max, ttlMs]));
    if (reply !== 0 && reply !== 1) throw new Error('Unexpected reply from the Redis lease script');
    return { acquired: reply === 1 };
  }

  async function release(holder: string, leaseId: string, partition?: string): Promise<void> {
    await watch.wait(run(RELEASE_SCRIPT, 1, keyOf(holder, partition), [leaseId]));
  }

  async function renew(holder: string, leaseId: string, ttlMs: number, partition?: string): Promise<boolean> {
    const reply = await watch.wait(run(RENEW_SCRIPT, 2, keyOf(holder, partition), [leaseId, ttlMs]));
    if (reply !== 0 && reply !== 1) throw new Error('Unexpected reply from the Redis lease script');
    return reply === 1;
  }

  return Object.freeze({ acquire, release, renew, keyOf });
}
