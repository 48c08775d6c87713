/**
 * Shadow limits on a real Redis: the core's shadow property (observed limits never refuse,
 * and would refuse exactly what the same limits enforced refuse, for the same reason)
 * over the one-round-trip request store, whose script decides the observed pairs, leases
 * and quotas itself, and over the three separate stores the limiter calls step by step.
 * Windows of ten minutes and more: Redis keeps its own clock, and the moment between the
 * two worlds' requests must count for nothing. Skipped without Redis (REDIS_URL).
 */
import fc from 'fast-check';
import type { LeaseClaim, RequestStore } from '@keyset/core';
import { deleteKeys, redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { checkShadowEquivalence, limitsArb, stepsArb, type ShadowStores } from '../../core/src/auth/shadow-limits.test-support.ts';
import { createRedisConcurrencyStore } from './redis-concurrency-store.ts';
import { createRedisQuotaStore } from './redis-quota-store.ts';
import { createRedisRateLimitStore } from './redis-rate-limit-store.ts';
import { createRedisRequestStore } from './redis-request-store.ts';

const url = await redisUrl();
const run = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
let redis: Redis;
let world = 0;

beforeAll(() => {
  if (url !== undefined) redis = new Redis(url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  if (url === undefined) return;
  await deleteKeys(redis, `keyset:test:${run}:`);
  redis.disconnect();
});

/** Gives-back that the test can wait for: each world's releases, pending until Redis answered. */
function tracked(): { track<T>(pending: Promise<T>): Promise<T>; settled(): Promise<void> } {
  const pending = new Set<Promise<unknown>>();
  return {
    track(promise) {
      pending.add(promise);
      void promise.finally(() => pending.delete(promise)).catch(() => {});
      return promise;
    },
    settled: async () => void (await Promise.allSettled([...pending])),
  };
}

/** One world over the request store: the limiter and the in-flight limit share it, so each request is one script call. */
const requestStore: ShadowStores = () => {
  world += 1;
  const p = (what: string) => `keyset:test:${run}:${world}:${what}:`;
  const inner = createRedisRequestStore({ redis, timeoutMs: 5_000, prefixes: { rateLimits: p('rl'), quotas: p('q'), leases: p('l') } });
  const { track, settled } = tracked();
  // The same object for both, as an application passes it: the limiter decides leases with the limits only then.
  const store: RequestStore = {
    ...inner,
    release: (holder, leaseId, partition) => track(Promise.resolve(inner.release(holder, leaseId, partition))),
    releaseLeases: (leases: readonly LeaseClaim[]) => track(inner.releaseLeases(leases)),
  };
  // No refusal memory: it answers a key refused by its quota with that refusal again, even
  // when the store would now name a rate limit first (the same refusal, another reason).
  return { limiter: { store, refusalMemory: 0 }, leases: store, settled };
};

/** One world over the separate stores: rate limits, quotas, then leases, one call each. */
const separateStores: ShadowStores = () => {
  world += 1;
  const p = (what: string) => `keyset:test:${run}:${world}:${what}:`;
  const leases = createRedisConcurrencyStore({ redis, timeoutMs: 5_000, prefix: p('l') });
  const { track, settled } = tracked();
  return {
    limiter: { store: createRedisRateLimitStore({ redis, timeoutMs: 5_000, prefix: p('rl') }), quotaStore: createRedisQuotaStore({ redis, timeoutMs: 5_000, prefix: p('q') }) },
    leases: { ...leases, release: (holder, leaseId, partition) => track(leases.release(holder, leaseId, partition)) },
    settled,
  };
};

describe.skipIf(url === undefined)('shadow limits on Redis', () => {
  for (const [name, stores] of [
    ['the one-round-trip request store', requestStore],
    ['the separate rate-limit, quota and lease stores', separateStores],
  ] as const) {
    it(`over ${name}: observed, never refuse; would refuse exactly what the same limits enforced refuse`, async () => {
      await fc.assert(
        fc.asyncProperty(limitsArb(600), stepsArb(false), (limits, steps) => checkShadowEquivalence(limits, steps, stores)),
        { numRuns: 40 },
      );
    });
  }
});
