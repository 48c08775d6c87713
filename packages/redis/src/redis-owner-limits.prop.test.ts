/**
 * Key and owner limits on real Redis: one script decides a key's pairs
 * and its owner's together, so a refusal by either spends nothing from the other. Same
 * counting model as core's owner-limits property: hour-long windows with limits of at most
 * 6 refill one request per 10 minutes, far beyond a run, so each pair is a counter.
 */
import { createRateLimiter, isKeysetError, type RateLimitPolicy } from '@keyset/core';
import { deleteKeys, redisUrl } from '@keyset/test-support';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from './index.ts';

const url = await redisUrl();
const prefix = `keyset:test:owner:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;

const policy = fc.record({ limit: fc.integer({ min: 1, max: 6 }), windowSeconds: fc.constant(3600) });
const named = (list: readonly { limit: number; windowSeconds: number }[]): RateLimitPolicy[] => list.map((p, i) => ({ ...p, name: `p${i}` }));

describe.skipIf(url === undefined)('owner limits on real Redis', () => {
  let redis: Redis;
  let run = 0;

  beforeAll(async () => {
    redis = new Redis(url as string, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    redis.on('error', () => undefined);
    await redis.connect();
  });

  afterAll(async () => {
    if (redis === undefined) return;
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('admits exactly what a counting model admits: no pair spends when another refuses', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(policy, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }),
        fc.array(policy, { minLength: 1, maxLength: 2 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        async (keyLimits, ownerLimits, requests) => {
          const limiter = createRateLimiter({ store: createRedisRateLimitStore({ redis, prefix: `${prefix}${run++}:` }), defaultPolicy: { limit: 100, windowSeconds: 1 }, onStoreError: 'closed' });
          const keys = keyLimits.map((list, i) => ({ id: `key_${i}`, policies: named(list) }));
          const owner = { id: 'cus_1', rateLimits: Object.freeze(named(ownerLimits)) };
          const left = new Map<string, number>();
          for (const k of keys) k.policies.forEach((p) => left.set(`${k.id}/${p.name}`, p.limit));
          owner.rateLimits.forEach((p) => left.set(`owner/${p.name}`, p.limit));
          for (const n of requests) {
            const key = keys[n % keys.length]!;
            const pairs = [...key.policies.map((p) => `${key.id}/${p.name}`), ...owner.rateLimits.map((p) => `owner/${p.name}`)];
            const expected = pairs.every((pair) => (left.get(pair) as number) > 0);
            if (expected) for (const pair of pairs) left.set(pair, (left.get(pair) as number) - 1);
            const admitted = await limiter.check(key.id, key.policies, { owner }).then(
              () => true,
              (error: unknown) => {
                if (!isKeysetError(error) || error.code !== 'rate_limited') throw error;
                return false;
              },
            );
            expect(admitted).toBe(expected);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
