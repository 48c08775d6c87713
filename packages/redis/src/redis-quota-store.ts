/**
 * Quota store on Redis: one `EVALSHA` per spend, the refill, comparison and decrement in
 * one script, so concurrent requests on any number of instances never spend more than
 * there is; a key's quota and its owner's (`spendAll`) are decided by the same script
 * call, all-or-nothing. Keys are hash-tagged with the identity, `<prefix>{<key>}`, or for
 * a key that has an owner with the owner, `<prefix>{owner:<id>}:<key>` beside the owner's
 * own `<prefix>{owner:<id>}` (one Cluster slot, one round trip), and never expire:
 * a lost count would hand its credits back (run Redis with `noeviction` or a `volatile-*`
 * `maxmemory-policy`, which never evicts keys without a TTL).
 *
 * Redis can still lose a count: a restart without persistence, a failover to a replica
 * that is behind. With `durable` (a `createPostgresQuotaStore`), what was spent is written
 * there every `flushIntervalMs` (the states this instance's spends left, the later of
 * each key's), and a count Redis does not hold is rebuilt from the durable state before
 * it is spent from, never started again from the full credits. So losing Redis hands back
 * at most what was spent since each instance's last flush: one flush interval while the
 * durable store answers.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, checkQuotaSpends, createSilenceWatch, isLaterQuotaState, type KnownOptions, laterQuotaState } from '@keyset/core/adapter';
import type { QuotaStore } from '@keyset/core';
import type { DurableQuotaStore, QuotaSpend, QuotaState, QuotaStoreResult } from '@keyset/core/adapter';
import { QUOTA_SCRIPT, RAISE_SCRIPT } from './internal/quota-script.ts';
import { sha1Hex } from './internal/sha1.ts';
import type { RedisScriptClient } from './redis-rate-limit-store.ts';

/** Where flush failures are reported. pino and `console` fit. */
export interface RedisQuotaStoreLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

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
  /**
   * Where spent quota is kept for good, e.g. `createPostgresQuotaStore({ client: pool })`
   * over the database that holds the keys. Without it a count Redis loses starts again
   * from the credits the key store holds: everything spent in the period comes back.
   */
  durable?: DurableQuotaStore;
  /**
   * With `durable`: how often what was spent through this instance is written there. The
   * most spending a loss of Redis can hand back is what all instances admitted in one
   * interval (plus whatever piled up while the durable store was failing).
   * @default 1000
   */
  flushIntervalMs?: number;
  /**
   * Receives failed flushes (one line per failed flush, so at most one per interval).
   * @default console
   */
  logger?: RedisQuotaStoreLogger;
}

/** Every name `RedisQuotaStoreOptions` knows, checked when the store is made. */
const STORE_OPTIONS = { redis: true, prefix: true, timeoutMs: true, durable: true, flushIntervalMs: true, logger: true } as const satisfies KnownOptions<RedisQuotaStoreOptions>;

/** The Redis quota store; `spend` always answers asynchronously. */
export interface RedisQuotaStore extends QuotaStore {
  spend(request: QuotaSpend): Promise<QuotaStoreResult>;
  /** Several quotas in one script call, all-or-nothing (see `QuotaStore.spendAll`); they must share one partition (one Cluster slot). */
  spendAll(requests: readonly QuotaSpend[]): Promise<QuotaStoreResult[]>;
  /** The Redis key of one quota (an identity's, or `owner:<id>`), for operators and tests; with `partition`, inside that hash tag. */
  keyOf(key: string, partition?: string): string;
  /**
   * Writes what was spent through this instance since the last flush to `durable` now
   * (the timer does it every `flushIntervalMs`). Resolves when written; rejects when the
   * durable store failed (the states are kept for the next flush). No-op without `durable`.
   */
  flush(): Promise<void>;
  /** Stops the flush timer and flushes once more. Never closes the Redis client or the durable store. */
  close(): Promise<void>;
}

/** Internal: the quota script's arguments for `requests`: 9 per key, `missing[i]` the mode for a missing hash, seeds for mode 2. */
export function quotaArgsOf(requests: readonly QuotaSpend[], missing: readonly number[], seeds: readonly (QuotaState | undefined)[]): (string | number)[] {
  return requests.flatMap(({ generation, initial, period, refillAmount, cost }, i) => {
    const seed = seeds[i];
    return [generation, initial, period, refillAmount ?? -1, cost, missing[i] as number, seed?.generation ?? 0, seed?.period ?? 0, seed?.remaining ?? 0];
  });
}

/** Keys written to the durable store in one statement. */
const FLUSH_BATCH = 500;

const consoleLogger: RedisQuotaStoreLogger = {
  warn: (details, message) => console.warn(`[keyset] ${message}`, details),
};

/**
 * Creates a quota store shared by every instance that uses the same Redis (or Cluster).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const redis = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const quotaStore = createRedisQuotaStore({ redis, durable: createPostgresQuotaStore({ client: pool }) });
 * const limiter = createRateLimiter({
 *   store: createRedisRateLimitStore({ redis }),
 *   quotaStore,
 *   defaultPolicy: { limit: 100, windowSeconds: 60 },
 * });
 * // on shutdown, before closing the pool:
 * await quotaStore.close();
 * ```
 */
export function createRedisQuotaStore(options: RedisQuotaStoreOptions): RedisQuotaStore {
  assertKnownOptions('createRedisQuotaStore', options, STORE_OPTIONS);
  return redisQuotaStoreParts(options).store;
}

/** Internal: the quota store and what a store that spends quotas within a larger script (`createRedisRequestStore`) shares with it. */
export interface RedisQuotaStoreParts {
  readonly store: RedisQuotaStore;
  /** The durable store, when counts are rebuilt from one. */
  readonly durable: DurableQuotaStore | undefined;
  /** Records the state a spend left, for the next flush to `durable`. */
  remembered(request: QuotaSpend, state: QuotaState): void;
}

/** Internal: builds the store (options already checked for unknown names). */
export function redisQuotaStoreParts(options: RedisQuotaStoreOptions): RedisQuotaStoreParts {
  const { redis, prefix = 'keyset:quota:', timeoutMs = 500, durable, flushIntervalMs = 1000, logger = consoleLogger } = options;
  if (typeof redis?.evalsha !== 'function' || typeof redis.eval !== 'function') {
    throw new ConfigError('createRedisQuotaStore needs `redis`: an ioredis client (evalsha and eval)');
  }
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new ConfigError(`prefix must be a string without { or }, got ${JSON.stringify(prefix)}`);
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  if (durable !== undefined && (typeof durable?.load !== 'function' || typeof durable.save !== 'function')) {
    throw new ConfigError('durable must be a durable quota store with load(key) and save(entries), e.g. createPostgresQuotaStore({ client: pool })');
  }
  if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 10 || flushIntervalMs > 3_600_000) {
    throw new ConfigError(`flushIntervalMs must be a number of milliseconds from 10 to 3600000, got ${String(flushIntervalMs)}`);
  }
  // Silence, not latency: a loaded Redis whose replies keep coming never times out (see the rate-limit store).
  const watch = createSilenceWatch(timeoutMs, 'Redis quota store');
  const shas = new Map<string, string>();
  const shasReady = Promise.all([QUOTA_SCRIPT, RAISE_SCRIPT].map(async (script) => shas.set(script, await sha1Hex(script))));
  const keyOf = (key: string, partition?: string): string =>
    partition === undefined || partition === key ? `${prefix}{${key}}` : `${prefix}{${partition}}:${key}`;

  /** The latest state this instance's spends left per key (with its partition), not yet written to `durable`. */
  let unsaved = new Map<string, { state: QuotaState; partition: string | undefined }>();
  const remember = (key: string, state: QuotaState, partition: string | undefined): void => {
    unsaved.set(key, { state: laterQuotaState(unsaved.get(key)?.state, state) as QuotaState, partition });
  };
  let flushing: Promise<void> | undefined;
  let timer: unknown;
  let closed = false;

  async function run(script: string, keys: readonly string[], args: (string | number)[]): Promise<unknown> {
    const digest = shas.get(script) ?? (await shasReady, shas.get(script) as string);
    try {
      return await redis.evalsha(digest, keys.length, ...keys, ...args);
    } catch (error) {
      // Script cache flushed or a fresh server: EVAL runs and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(script, keys.length, ...keys, ...args);
    }
  }

  async function spendAll(requests: readonly QuotaSpend[]): Promise<QuotaStoreResult[]> {
    checkQuotaSpends(requests);
    const first = requests[0] as QuotaSpend;
    const tag = first.partition ?? first.key;
    if (requests.some((r) => (r.partition ?? r.key) !== tag)) {
      throw new ConfigError('A Redis quota spend spans one partition (one identity, or one owner with its key), so it stays in one Cluster slot');
    }
    const keys = requests.map((r) => keyOf(r.key, r.partition));
    // With a durable store a missing count is not started from `initial` at once: the
    // script answers -1 and the durable state (what was spent before Redis lost it) seeds it.
    const none = requests.map(() => undefined);
    let reply = await watch.wait(run(QUOTA_SCRIPT, keys, quotaArgsOf(requests, requests.map(() => (durable === undefined ? 1 : 0)), none)));
    if (durable !== undefined && Array.isArray(reply) && reply[0] === -1) {
      // Every entry's durable state, not only those the first call found missing: Redis can
      // lose another hash before the second call (a failover at that instant), and the
      // second call rebuilds whatever is missing then. A hash that still exists ignores its seed.
      const seeds = await Promise.all(requests.map((r) => durable.load(r.key)));
      reply = await watch.wait(run(QUOTA_SCRIPT, keys, quotaArgsOf(requests, seeds.map((seed) => (seed === undefined ? 1 : 2)), seeds)));
    }
    if (
      !Array.isArray(reply) ||
      reply.length !== 1 + 4 * requests.length ||
      !reply.every((n) => Number.isSafeInteger(n)) ||
      (reply[0] !== 0 && reply[0] !== 1)
    ) {
      throw new Error('Unexpected reply from the Redis quota script');
    }
    return requests.map((request, i) => {
      const [allowed, remaining, generation, period] = (reply as number[]).slice(1 + 4 * i, 5 + 4 * i) as [number, number, number, number];
      if ((allowed !== 0 && allowed !== 1) || remaining < 0) throw new Error('Unexpected reply from the Redis quota script');
      if (durable !== undefined) remember(request.key, { generation, period, remaining }, request.partition);
      return { allowed: allowed === 1, remaining };
    });
  }

  async function spend(request: QuotaSpend): Promise<QuotaStoreResult> {
    return (await spendAll([request]))[0] as QuotaStoreResult;
  }

  /** One flush: the unsaved states to `durable`; Redis raised where the durable state is further along. */
  async function flushOnce(store: DurableQuotaStore): Promise<void> {
    if (unsaved.size === 0) return;
    const batch = unsaved;
    unsaved = new Map();
    // Sorted: concurrent flushes from several instances lock the rows in one order.
    const entries = [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, { state }]) => ({ key, state }));
    try {
      for (let i = 0; i < entries.length; i += FLUSH_BATCH) {
        const chunk = entries.slice(i, i + FLUSH_BATCH);
        const saved = await store.save(chunk);
        // The durable state is further along than what Redis answered here: Redis lost
        // spending (a replica that was behind). Raise it; never lower it.
        const raises = chunk.flatMap((entry, j) => {
          const durableState = saved[j];
          return durableState !== undefined && isLaterQuotaState(durableState, entry.state)
            ? [run(RAISE_SCRIPT, [keyOf(entry.key, batch.get(entry.key)?.partition)], [durableState.generation, durableState.period, durableState.remaining])]
            : [];
        });
        await Promise.all(raises);
        for (const entry of chunk) batch.delete(entry.key);
      }
    } catch (error) {
      // Kept for the next flush, merged with whatever was spent meanwhile.
      for (const [key, { state, partition }] of batch) remember(key, state, partition);
      throw error;
    }
  }

  function flush(): Promise<void> {
    if (durable === undefined) return Promise.resolve();
    // One flush at a time; a call during one waits for it, then runs its own.
    const next = (flushing ?? Promise.resolve()).then(() => flushOnce(durable));
    const settled: Promise<void> = next.then(
      () => undefined,
      () => undefined,
    );
    flushing = settled;
    void settled.then(() => {
      if (flushing === settled) flushing = undefined;
    });
    return next;
  }

  function schedule(): void {
    if (durable === undefined || closed) return;
    timer = setTimeout(() => {
      flush()
        .catch((error: unknown) => {
          logger.warn(
            { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), pendingKeys: unsaved.size },
            'quota flush to the durable store failed; retrying next interval (a Redis loss now hands back what was spent since the last flush)',
          );
        })
        .finally(schedule);
    }, flushIntervalMs);
    // Node's timer has `unref` (a flush must not keep the process alive); the DOM types say `number`.
    (timer as { unref?: () => void }).unref?.();
  }
  schedule();

  const store: RedisQuotaStore = Object.freeze({
    spend,
    spendAll,
    keyOf,
    flush,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
      await flush();
    },
  });
  return {
    store,
    durable,
    remembered: (request: QuotaSpend, state: QuotaState): void => {
      if (durable !== undefined) remember(request.key, state, request.partition);
    },
  };
}
