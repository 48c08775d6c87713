/**
 * In-process usage store: one row per (bucket size, key, bucket start) in Maps, added to
 * by `add` exactly as the PostgreSQL store adds to its table. For tests, development and
 * single-process deployments; counts live as long as the process.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { UsageBucket, UsageDelta, UsageFlushToken, UsageInterval, UsageQuery, UsageRetention, UsageStore, UsageTopItem, UsageTopQuery } from './types.ts';
import {
  checkUsageQuery,
  checkUsageTopQuery,
  denseUsageBuckets,
  emptyUsageRequests,
  SERVED_OUTCOMES,
  USAGE_OUTCOMES,
  usageBucketStart,
  usageCutoffs,
  usageRetention,
  usageTopSegments,
} from './usage-range.ts';
import { checkUsageDeltas, checkUsageFlushToken } from './check-usage-deltas.ts';

/** Options of `createMemoryUsageStore`. */
export interface MemoryUsageStoreOptions {
  /** How long buckets of each size are kept by `prune`, in days. @default { minute: 2, hour: 90, day: 730 } */
  retention?: UsageRetention;
}

const MEMORY_USAGE_STORE_OPTIONS = { retention: { minute: true, hour: true, day: true } } as const satisfies KnownOptions<MemoryUsageStoreOptions>;

/** The memory usage store; `size` counts the rows held. */
export interface MemoryUsageStore extends UsageStore {
  readonly size: number;
}

interface KeyRows {
  ownerId: string | null;
  /** Bucket start → counts. */
  buckets: Map<number, UsageBucket>;
}

const SIZES: readonly UsageInterval[] = ['minute', 'hour', 'day'];

/**
 * Creates an in-process usage store.
 *
 * @example
 * ```ts
 * const usage = createUsageCounter({ store: createMemoryUsageStore() });
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, onDecision: usage.record });
 * ```
 */
export function createMemoryUsageStore(options: MemoryUsageStoreOptions = {}): MemoryUsageStore {
  assertKnownOptions('createMemoryUsageStore', options, MEMORY_USAGE_STORE_OPTIONS);
  const retention = usageRetention(options.retention);
  /** Bucket size → key id → its rows. */
  const rows = new Map<UsageInterval, Map<string, KeyRows>>(SIZES.map((size) => [size, new Map()]));
  let size = 0;
  /** Instance → the highest flush sequence applied (exactly-once flushes). */
  const flushed = new Map<string, number>();

  function addTo(interval: UsageInterval, delta: UsageDelta): void {
    const keys = rows.get(interval) as Map<string, KeyRows>;
    let key = keys.get(delta.keyId);
    if (key === undefined) keys.set(delta.keyId, (key = { ownerId: delta.ownerId, buckets: new Map() }));
    // A key's owner is the latest one written, as the PostgreSQL store keeps it.
    if (delta.ownerId !== null) key.ownerId = delta.ownerId;
    const start = usageBucketStart(delta.minute, interval);
    let bucket = key.buckets.get(start);
    if (bucket === undefined) {
      key.buckets.set(start, (bucket = { start, requests: emptyUsageRequests(), credits: 0 }));
      size++;
    }
    USAGE_OUTCOMES.forEach((outcome, i) => (bucket.requests[outcome] += delta.requests[i] as number));
    bucket.credits += delta.credits;
  }

  function keysOf(interval: UsageInterval, query: { keyId?: string | undefined; ownerId?: string | undefined }): KeyRows[] {
    const keys = rows.get(interval) as Map<string, KeyRows>;
    if (query.keyId !== undefined) {
      const key = keys.get(query.keyId);
      return key === undefined ? [] : [key];
    }
    return [...keys.values()].filter((key) => key.ownerId === query.ownerId);
  }

  return Object.freeze({
    get size() {
      return size;
    },

    async add(deltas: readonly UsageDelta[], token?: UsageFlushToken): Promise<void> {
      checkUsageDeltas(deltas);
      checkUsageFlushToken(token);
      if (token !== undefined) {
        if ((flushed.get(token.instance) ?? 0) >= token.sequence) return;
        flushed.set(token.instance, token.sequence);
      }
      for (const delta of deltas) for (const interval of SIZES) addTo(interval, delta);
    },

    async read(query: UsageQuery): Promise<UsageBucket[]> {
      const from = checkUsageQuery(query);
      const { to, interval } = query;
      const found = new Map<number, UsageBucket>();
      for (const key of keysOf(interval, query)) {
        for (const [start, bucket] of key.buckets) {
          if (start < from || start >= to) continue;
          const sum = found.get(start) ?? { start, requests: emptyUsageRequests(), credits: 0 };
          for (const outcome of USAGE_OUTCOMES) sum.requests[outcome] += bucket.requests[outcome];
          sum.credits += bucket.credits;
          found.set(start, sum);
        }
      }
      return denseUsageBuckets(found, from, to, interval);
    },

    async top(query: UsageTopQuery): Promise<UsageTopItem[]> {
      const { interval, from } = checkUsageTopQuery(query);
      // The coarsest rows that sum the range, as the PostgreSQL store reads them.
      const found = new Map<string, UsageTopItem>();
      for (const segment of usageTopSegments(from, query.to, interval)) {
        for (const [keyId, key] of rows.get(segment.interval) as Map<string, KeyRows>) {
          for (const [start, bucket] of key.buckets) {
            if (start < segment.from || start >= segment.to) continue;
            let item = found.get(keyId);
            if (item === undefined) found.set(keyId, (item = { keyId, requests: 0, refusals: 0, credits: 0 }));
            let total = 0;
            for (const outcome of USAGE_OUTCOMES) total += bucket.requests[outcome];
            let served = 0;
            for (const outcome of SERVED_OUTCOMES) served += bucket.requests[outcome];
            item.requests += total;
            item.refusals += total - served;
            item.credits += bucket.credits;
          }
        }
      }
      // A key with none of what is ranked is not in the ranking (the PostgreSQL store's HAVING).
      const items = [...found.values()].filter((item) => item[query.by] > 0);
      const by = query.by;
      items.sort((a, b) => b[by] - a[by] || (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
      return items.slice(0, query.limit);
    },

    async prune(now: number): Promise<number> {
      const cutoffs = usageCutoffs(now, retention);
      let removed = 0;
      for (const interval of SIZES) {
        for (const [keyId, key] of rows.get(interval) as Map<string, KeyRows>) {
          for (const start of key.buckets.keys()) {
            if (start < cutoffs[interval]) {
              key.buckets.delete(start);
              removed++;
            }
          }
          if (key.buckets.size === 0) rows.get(interval)?.delete(keyId);
        }
      }
      size -= removed;
      return removed;
    },
  });
}
