/**
 * GCRA rate-limit store on Redis: one `EVALSHA` per decision, whatever the number of
 * pairs, with Redis `TIME` as the clock, so instances whose clocks drift apart still
 * share one limit. Keys are hash-tagged with the
 * decision's key, `<prefix>{<key>}:<policy name>`, so every pair of a decision lives
 * in one Redis Cluster slot; each key expires when its TAT passes, so memory is bounded
 * by the keys active within one window.
 *
 * A key with an owner whose limits apply is decided with the owner's pairs in one script,
 * so both live in the owner's slot: the owner's pairs as `<prefix>{owner:<id>}:owner.<name>`,
 * the key's as `<prefix>{owner:<id>}:<key>:<name>` (the request's `partition`). All keys of
 * one owner hence share one slot: an owner's traffic is one shard's, as its shared limit
 * requires.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, createSilenceWatch, evaluateGcra, type KnownOptions, prepareGcra } from '@keyset/core/adapter';
import type { RateLimitDecision, RateLimitRequest, RateLimitStore } from '@keyset/core';
import type { GcraParameters } from '@keyset/core/adapter';
import { GCRA_SCRIPT } from './internal/gcra-script.ts';
import { sha1Hex } from './internal/sha1.ts';

/**
 * What the store needs from a Redis client: `EVALSHA` and `EVAL`. An ioredis `Redis` or
 * `Cluster` fits. Create it with `enableOfflineQueue: false` (so an outage fails at
 * once instead of queueing) and a small `maxRetriesPerRequest` (e.g. 1).
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of `createRedisRateLimitStore`. */
export interface RedisRateLimitStoreOptions {
  /** The ioredis client (or anything with `evalsha`/`eval`). The store never closes it. */
  redis: RedisScriptClient;
  /**
   * Prefix of every key. Must not contain `{` or `}` (they would move the hash tag).
   * @default 'keyset:rl:'
   */
  prefix?: string;
  /**
   * How long Redis may stay silent while a decision waits. The clock restarts whenever
   * Redis answers any decision of this store, so a loaded Redis whose replies keep coming
   * (only later than usual) never times out; a stopped or unreachable one does, and the
   * limiter's `onStoreError` decides. A decision gives up after 5 × `timeoutMs` in all.
   * The script may still run in Redis after a timeout.
   * @default 500
   */
  timeoutMs?: number;
}

/** Every name `RedisRateLimitStoreOptions` knows, checked when the store is made. */
const STORE_OPTIONS = { redis: true, prefix: true, timeoutMs: true } as const satisfies KnownOptions<RedisRateLimitStoreOptions>;

/** The Redis store; `decide` always answers asynchronously. */
export interface RedisRateLimitStore extends RateLimitStore {
  decide(requests: readonly RateLimitRequest[], cost?: number): Promise<RateLimitDecision[]>;
  /** The Redis key of one (key, policy name) pair, for operators and tests; with `partition`, inside that hash tag. */
  keyOf(key: string, policyName?: string, partition?: string): string;
}

/**
 * Creates a rate-limit store shared by every instance that uses the same Redis.
 * All pairs of one decision must share one `key` (one identity, several policies),
 * so that the decision stays in one Cluster slot.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const limiter = createRateLimiter({
 *   store: createRedisRateLimitStore({ redis }),
 *   defaultPolicy: { limit: 100, windowSeconds: 60 },
 * });
 * ```
 */
export function createRedisRateLimitStore(options: RedisRateLimitStoreOptions): RedisRateLimitStore {
  assertKnownOptions('createRedisRateLimitStore', options, STORE_OPTIONS);
  const { redis, prefix = 'keyset:rl:', timeoutMs = 500 } = options;
  if (typeof redis?.evalsha !== 'function' || typeof redis.eval !== 'function') {
    throw new ConfigError('createRedisRateLimitStore needs `redis`: an ioredis client (evalsha and eval)');
  }
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new ConfigError(`prefix must be a string without { or }, got ${JSON.stringify(prefix)}`);
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  let sha: string | undefined;
  const watch = createSilenceWatch(timeoutMs, 'Redis rate-limit store');
  const shaReady = sha1Hex(GCRA_SCRIPT).then((value) => (sha = value));

  const keyOf = (key: string, policyName = 'default', partition?: string): string =>
    partition === undefined || partition === key ? `${prefix}{${key}}:${policyName}` : `${prefix}{${partition}}:${key}:${policyName}`;

  async function run(keys: string[], args: (string | number)[]): Promise<unknown> {
    const digest = sha ?? (await shaReady);
    try {
      return await redis.evalsha(digest, keys.length, ...keys, ...args);
    } catch (error) {
      // Script cache flushed or a fresh server (failover, restart): EVAL runs the script
      // and caches it again, so the next decision is one EVALSHA again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(GCRA_SCRIPT, keys.length, ...keys, ...args);
    }
  }

  async function decide(requests: readonly RateLimitRequest[], cost = 1): Promise<RateLimitDecision[]> {
    const parameters = prepareGcra(requests, cost);
    const first = requests[0] as RateLimitRequest;
    const tag = first.partition ?? first.key;
    if (requests.some((r) => (r.partition ?? r.key) !== tag)) {
      throw new ConfigError('A Redis rate-limit decision spans one partition (one identity, or one owner with its key), so it stays in one Cluster slot');
    }
    const keys = parameters.map((p, i) => keyOf((requests[i] as RateLimitRequest).key, p.name, (requests[i] as RateLimitRequest).partition));
    const args: (string | number)[] = [cost];
    for (const p of parameters) args.push(p.emissionMicros, p.burstMicros, p.observe ? 1 : 0);
    const reply = await watch.wait(run(keys, args));
    return decisionsFrom(reply, parameters, cost);
  }

  return Object.freeze({ decide, keyOf });
}

/** Rebuilds the decisions from the script's `{ now, allowed, stored… }` reply. */
function decisionsFrom(reply: unknown, parameters: readonly GcraParameters[], cost: number): RateLimitDecision[] {
  if (!Array.isArray(reply) || reply.length !== parameters.length + 2 || !reply.every((n) => Number.isSafeInteger(n))) {
    throw new Error('Unexpected reply from the Redis rate-limit script');
  }
  const [now, allowed, ...stored] = reply as number[];
  const outcome = evaluateGcra(
    parameters.map((p, i) => ({ parameters: p, tat: (stored[i] as number) > (now as number) ? stored[i] : undefined })),
    now as number,
    cost,
  );
  // Same integers, same comparison: a disagreement means a foreign script or key type.
  if (outcome.allowed !== (allowed === 1)) throw new Error('Redis rate-limit script and evaluateGcra disagree');
  return outcome.decisions;
}
