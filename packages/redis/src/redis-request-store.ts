/**
 * Rate limits, quotas and in-flight leases on one Redis, decided per request in **one**
 * `EVALSHA` (`decideRequest`: every GCRA pair of the key and its owner, both leases, both
 * quotas, all or nothing) and given back in one more (`releaseLeases`): two round trips
 * for an admitted request with every feature on, one for a refused one. The keys are
 * those of the three separate stores, which it contains and whose calls it also answers
 * (`decide`, `spend`/`spendAll`, `acquire`/`release`/`renew`), so the step-by-step path a
 * limiter falls back to while the one-step call fails counts the same state.
 *
 * Redis Cluster: a key with an owner keeps everything in its owner's hash tag
 * (`{owner:<id>}`): its GCRA pairs, its quota count and its lease set beside the owner's,
 * so the script touches one slot; a key without an owner keeps everything in its own,
 * `{<key id>}`. The request's keys are checked to share one tag before the call.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, checkQuotaSpends, createSilenceWatch, evaluateGcra, type KnownOptions, prepareGcra } from '@keyset/core/adapter';
import type { LeaseClaim, RateLimitRequest, RequestDecisionInput, RequestDecisionOutput, RequestStore } from '@keyset/core';
import type { DurableQuotaStore, QuotaSpend, QuotaStoreResult } from '@keyset/core/adapter';
import { RELEASE_ALL_SCRIPT, REQUEST_SCRIPT } from './internal/request-script.ts';
import { sha1Hex } from './internal/sha1.ts';
import { createRedisConcurrencyStore, type RedisConcurrencyStore } from './redis-concurrency-store.ts';
import { quotaArgsOf, redisQuotaStoreParts, type RedisQuotaStore, type RedisQuotaStoreLogger } from './redis-quota-store.ts';
import { createRedisRateLimitStore, type RedisRateLimitStore, type RedisScriptClient } from './redis-rate-limit-store.ts';

/** Options of `createRedisRequestStore`. */
export interface RedisRequestStoreOptions {
  /** The ioredis client (or anything with `evalsha`/`eval`), `Redis` or `Cluster`. The store never closes it. */
  redis: RedisScriptClient;
  /**
   * Prefixes of the keys of each kind, as the separate stores' `prefix` (no `{` or `}`).
   * @default { rateLimits: 'keyset:rl:', quotas: 'keyset:quota:', leases: 'keyset:inflight:' }
   */
  prefixes?: { rateLimits?: string; quotas?: string; leases?: string };
  /**
   * How long Redis may stay silent while a call waits (see `createRedisRateLimitStore`).
   * @default 500
   */
  timeoutMs?: number;
  /** Where spent quota is kept for good (see `createRedisQuotaStore`). */
  durable?: DurableQuotaStore;
  /**
   * With `durable`: how often what was spent through this instance is written there.
   * @default 1000
   */
  flushIntervalMs?: number;
  /**
   * Receives failed quota flushes.
   * @default console
   */
  logger?: RedisQuotaStoreLogger;
}

const STORE_OPTIONS = {
  redis: true,
  prefixes: { rateLimits: true, quotas: true, leases: true },
  timeoutMs: true,
  durable: true,
  flushIntervalMs: true,
  logger: true,
} as const satisfies KnownOptions<RedisRequestStoreOptions>;

/** The Redis request store: every call answers asynchronously. */
export interface RedisRequestStore extends RequestStore {
  decideRequest(input: RequestDecisionInput): Promise<RequestDecisionOutput>;
  releaseLeases(leases: readonly LeaseClaim[]): Promise<void>;
  /** The separate stores over the same keys (their `keyOf`, for operators and tests). */
  readonly rateLimits: RedisRateLimitStore;
  readonly quotas: RedisQuotaStore;
  readonly leases: RedisConcurrencyStore;
  /** Writes what was spent since the last flush to `durable` now (see `RedisQuotaStore.flush`). */
  flush(): Promise<void>;
  /** Stops the quota flush timer and flushes once more. Never closes the Redis client. */
  close(): Promise<void>;
}

/**
 * Creates the store a limiter (`store`, and its quota store unless another is given) and an
 * in-flight limit (`store`) share, so that the guard decides each request in one call.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const store = createRedisRequestStore({ redis });
 * const limiter = createRateLimiter({ store, defaultPolicy: { limit: 100, windowSeconds: 60 } });
 * const guard = createApiKeyGuard({ keyring, limiter, concurrency: createConcurrencyLimit({ max: 5, store }) });
 * ```
 */
export function createRedisRequestStore(options: RedisRequestStoreOptions): RedisRequestStore {
  assertKnownOptions('createRedisRequestStore', options, STORE_OPTIONS);
  const { redis, prefixes = {}, timeoutMs = 500, durable, flushIntervalMs, logger } = options;
  if (typeof redis?.evalsha !== 'function' || typeof redis.eval !== 'function') {
    throw new ConfigError('createRedisRequestStore needs `redis`: an ioredis client (evalsha and eval)');
  }
  // The separate stores check the prefixes and the timeout.
  const rateLimits = createRedisRateLimitStore({ redis, timeoutMs, ...(prefixes.rateLimits === undefined ? {} : { prefix: prefixes.rateLimits }) });
  const parts = redisQuotaStoreParts({
    redis,
    timeoutMs,
    ...(prefixes.quotas === undefined ? {} : { prefix: prefixes.quotas }),
    ...(durable === undefined ? {} : { durable }),
    ...(flushIntervalMs === undefined ? {} : { flushIntervalMs }),
    ...(logger === undefined ? {} : { logger }),
  });
  const quotas = parts.store;
  const leases = createRedisConcurrencyStore({ redis, timeoutMs, ...(prefixes.leases === undefined ? {} : { prefix: prefixes.leases }) });
  const watch = createSilenceWatch(timeoutMs, 'Redis request store');
  const shas = Promise.all([sha1Hex(REQUEST_SCRIPT), sha1Hex(RELEASE_ALL_SCRIPT)]);

  async function run(script: string, which: 0 | 1, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const sha = (await shas)[which];
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      // Script cache flushed or a fresh server: EVAL runs it and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(script, keys.length, ...keys, ...args);
    }
  }

  async function decideRequest(input: RequestDecisionInput): Promise<RequestDecisionOutput> {
    const { limits, quotas: spends, leases: claims } = input;
    const parameters = prepareGcra(limits, 1);
    if (spends.length > 0) checkQuotaSpends(spends);
    const tag = tagOf(limits[0] as RateLimitRequest);
    if (limits.some((r) => tagOf(r) !== tag) || spends.some((q) => (q.partition ?? q.key) !== tag) || claims.some((l) => leaseTag(l) !== tag)) {
      throw new ConfigError('A Redis request decision spans one partition (one identity, or one owner with its key), so it stays in one Cluster slot');
    }
    const keys = [
      ...limits.map((r, i) => rateLimits.keyOf(r.key, (parameters[i] as (typeof parameters)[number]).name, r.partition)),
      ...spends.map((q) => quotas.keyOf(q.key, q.partition)),
      ...claims.map((l) => leases.keyOf(l.holder, l.partition)),
    ];
    const head: (string | number)[] = [limits.length, spends.length, claims.length];
    for (const p of parameters) head.push(p.emissionMicros, p.burstMicros, p.observe ? 1 : 0);
    const tail: (string | number)[] = [];
    for (const l of claims) tail.push(l.leaseId, l.max, l.ttlMs);
    // Which quotas and leases are observed (shadow): decided apart, never refusing.
    for (const q of spends) tail.push(q.observe === true ? 1 : 0);
    for (const l of claims) tail.push(l.observe === true ? 1 : 0);
    const none = spends.map(() => undefined);
    let reply = await watch.wait(run(REQUEST_SCRIPT, 0, keys, [...head, ...quotaArgsOf(spends, spends.map(() => (parts.durable === undefined ? 1 : 0)), none), ...tail]));
    if (parts.durable !== undefined && Array.isArray(reply) && reply[0] === -1) {
      // A lost count is rebuilt from what the durable store holds (see the quota store).
      const { durable: kept } = parts;
      const seeds = await Promise.all(spends.map((q) => kept.load(q.key)));
      reply = await watch.wait(run(REQUEST_SCRIPT, 0, keys, [...head, ...quotaArgsOf(spends, seeds.map((seed) => (seed === undefined ? 1 : 2)), seeds), ...tail]));
    }
    return outputOf(reply, input, parameters);
  }

  function outputOf(reply: unknown, input: RequestDecisionInput, parameters: ReturnType<typeof prepareGcra>): RequestDecisionOutput {
    const n = input.limits.length;
    const m = input.quotas.length;
    if (!Array.isArray(reply) || reply.length < HEAD + n || !reply.every((x) => Number.isSafeInteger(x))) throw new Error('Unexpected reply from the Redis request script');
    const [now, allowed, leaseRefused, quotasDecided, observedLease, observedQuotas] = reply as number[];
    const tats = (reply as number[]).slice(HEAD, HEAD + n);
    const outcome = evaluateGcra(
      parameters.map((p, i) => ({ parameters: p, tat: (tats[i] as number) > (now as number) ? tats[i] : undefined })),
      now as number,
      1,
    );
    // Same integers, same comparison: a disagreement means a foreign script or key type.
    if (outcome.allowed !== (allowed === 1)) throw new Error('Redis request script and evaluateGcra disagree');
    let results: QuotaStoreResult[] | undefined;
    if (quotasDecided === 1) {
      if (reply.length !== HEAD + n + 4 * m) throw new Error('Unexpected reply from the Redis request script');
      results = input.quotas.map((spend: QuotaSpend, i) => {
        const [ok, remaining, generation, period] = (reply as number[]).slice(HEAD + n + 4 * i, HEAD + 4 + n + 4 * i) as [number, number, number, number];
        if ((ok !== 0 && ok !== 1) || remaining < 0) throw new Error('Unexpected reply from the Redis request script');
        parts.remembered(spend, { generation, period, remaining });
        return { allowed: ok === 1, remaining };
      });
    }
    return { limits: outcome.decisions, leaseRefused: leaseRefused as number, observedLease: observedLease as number, quotas: results, observedQuotas: observedQuotas === 1, nowMicros: now as number, tats };
  }

  async function releaseLeases(claims: readonly LeaseClaim[]): Promise<void> {
    if (claims.length === 0) return;
    await watch.wait(run(RELEASE_ALL_SCRIPT, 1, claims.map((l) => leases.keyOf(l.holder, l.partition)), claims.map((l) => l.leaseId)));
  }

  return Object.freeze({
    decide: rateLimits.decide,
    spend: quotas.spend,
    spendAll: quotas.spendAll,
    flush: quotas.flush,
    close: quotas.close,
    acquire: leases.acquire,
    release: leases.release,
    renew: leases.renew,
    decideRequest,
    releaseLeases,
    rateLimits,
    quotas,
    leases,
  });
}

/** Numbers before the TATs in the script's reply (see `REQUEST_SCRIPT`). */
const HEAD = 6;

function tagOf(request: RateLimitRequest): string {
  return request.partition ?? request.key;
}

/** A lease's hash tag: its partition, or its holder (`key:<id>`, `owner:<id>`). */
function leaseTag(lease: LeaseClaim): string {
  return lease.partition ?? lease.holder;
}
