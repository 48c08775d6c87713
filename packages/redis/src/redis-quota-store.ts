/**
 * Quota store on Redis: one `EVALSHA` per spend, the refill, comparison and decrement in
 * one script, so concurrent requests on any number of instances never spend more than
 * there is. Keys are hash-tagged with the identity, `<prefix>{<key>}`, and never expire:
 * a lost count would hand its credits back (run Redis with `noeviction` or a `volatile-*`
 * `maxmemory-policy`, which never evicts keys without a TTL).
 * @module
 */
import { ConfigError } from '@keyset/core';
import { checkQuotaSpend, createSilenceWatch } from '@keyset/core/adapter';
import type { QuotaStore } from '@keyset/core';
import type { QuotaSpend, QuotaStoreResult } from '@keyset/core/adapter';
import { QUOTA_SCRIPT } from './internal/quota-script.ts';
import { sha1Hex } from './internal/sha1.ts';
import type { RedisScriptClient } from './redis-rate-limit-store.ts';

/** Options of `createRedisQuotaStore`. */
export interface RedisQuotaStoreOptions {
  /** The ioredis client (or anything with `evalsha`/`eval`). The store never closes it. */
  redis: RedisScriptClient;
  /**
   * Prefix of every key. Must not contain `{` or `}` (they would move the hash tag).
   * @default 'keyset:quota:'
   */
  prefix?: string;
  /**
   * How long Redis may stay silent while a spend waits (the clock restarts whenever Redis
   * answers any spend of this store; 5 × `timeoutMs` in all at most); past it the spend
   * rejects and the limiter answers 503 `unavailable` (or admits, with
   * `onStoreError: 'open'`). The script may still run.
   * @default 500
   */
  timeoutMs?: number;
}

/** The Redis quota store; `spend` always answers asynchronously. */
export interface RedisQuotaStore extends QuotaStore {
  spend(request: QuotaSpend): Promise<QuotaStoreResult>;
  /** The Redis key of one identity's quota, for operators and tests. */
  keyOf(key: string): string;
}

/**
 * Creates a quota store shared by every instance that uses the same Redis (or Cluster).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const limiter = createRateLimiter({
 *   store: createRedisRateLimitStore({ redis }),
 *   quotaStore: createRedisQuotaStore({ redis }),
 *   defaultPolicy: { limit: 100, windowSeconds: 60 },
 * });
 * ```
 */
export function createRedisQuotaStore(options: RedisQuotaStoreOptions): RedisQuotaStore {
  const { redis, prefix = 'keyset:quota:', timeoutMs = 500 } = options;
  if (typeof redis?.evalsha !== 'function' || typeof redis.eval !== 'function') {
    throw new ConfigError('createRedisQuotaStore needs `redis`: an ioredis client (evalsha and eval)');
  }
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new ConfigError(`prefix must be a string without { or }, got ${JSON.stringify(prefix)}`);
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  // Silence, not latency: a loaded Redis whose replies keep coming never times out (see the rate-limit store).
  const watch = createSilenceWatch(timeoutMs, 'Redis quota store');
  let sha: string | undefined;
  const shaReady = sha1Hex(QUOTA_SCRIPT).then((value) => (sha = value));
  const keyOf = (key: string): string => `${prefix}{${key}}`;

  async function run(key: string, args: (string | number)[]): Promise<unknown> {
    const digest = sha ?? (await shaReady);
    try {
      return await redis.evalsha(digest, 1, key, ...args);
    } catch (error) {
      // Script cache flushed or a fresh server: EVAL runs and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(QUOTA_SCRIPT, 1, key, ...args);
    }
  }

  async function spend(request: QuotaSpend): Promise<QuotaStoreResult> {
    checkQuotaSpend(request);
    const { key, generation, initial, period, refillAmount, cost } = request;
    const reply = await watch.wait(run(keyOf(key), [generation, initial, period, refillAmount ?? -1, cost]));
    if (!Array.isArray(reply) || reply.length !== 2 || !reply.every((n) => Number.isSafeInteger(n)) || (reply[1] as number) < 0) {
      throw new Error('Unexpected reply from the Redis quota script');
    }
    return { allowed: reply[0] === 1, remaining: reply[1] as number };
  }

  return Object.freeze({ spend, keyOf });
}
