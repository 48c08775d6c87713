/**
 * Key and owner limits decided together: a request is admitted only if
 * the key's limits and its owner's all admit it, and a refusal by any of them spends
 * nothing from the others. Checked against a counting model: with every request at one
 * instant no budget refills, so each pair is a counter of its burst, and a refused request
 * must leave every counter as it was (a partial spend would refuse a later request the
 * model admits).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { createMemoryRateLimitStore } from './memory-store.ts';
import { createRateLimiter } from './rate-limiter.ts';
import type { RateLimitPolicy } from './types.ts';

const NOW = Date.UTC(2026, 0, 1);

const policy = fc.record({ limit: fc.integer({ min: 1, max: 6 }), windowSeconds: fc.constantFrom(60, 3600) });

const scenario = fc.record({
  keyLimits: fc.array(fc.array(policy, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }),
  ownerLimits: fc.array(policy, { minLength: 1, maxLength: 2 }),
  requests: fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
});

function named(list: readonly { limit: number; windowSeconds: number }[]): RateLimitPolicy[] {
  return list.map((p, i) => ({ ...p, name: `p${i}` }));
}

describe('key and owner limits, decided together', () => {
  it('admits exactly what a counting model admits: no pair spends when another refuses', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ keyLimits, ownerLimits, requests }) => {
        const limiter = createRateLimiter({ store: createMemoryRateLimitStore({ clock: () => NOW }), defaultPolicy: { limit: 100, windowSeconds: 1 }, clock: () => NOW, logger: { warn() {} } });
        const keys = keyLimits.map((list, i) => ({ id: `key_${i}`, policies: named(list) }));
        const owner = { id: 'cus_1', rateLimits: Object.freeze(named(ownerLimits)) };
        // Model: one counter per pair, starting at its burst (= limit).
        const left = new Map<string, number>();
        for (const k of keys) k.policies.forEach((p) => left.set(`${k.id}/${p.name}`, p.limit));
        owner.rateLimits.forEach((p) => left.set(`owner/${p.name}`, p.limit));
        for (const n of requests) {
          const key = keys[n % keys.length]!;
          const pairs = [...key.policies.map((p) => `${key.id}/${p.name}`), ...owner.rateLimits.map((p) => `owner/${p.name}`)];
          const expected = pairs.every((pair) => (left.get(pair) as number) > 0);
          if (expected) for (const pair of pairs) left.set(pair, (left.get(pair) as number) - 1);
          let admitted: boolean;
          try {
            const { headers } = await limiter.check(key.id, key.policies, { owner });
            admitted = true;
            // The headers name the owner's policies apart from the key's.
            for (const p of owner.rateLimits) expect(headers['ratelimit-policy']).toContain(`"owner.${p.name}"`);
          } catch (error) {
            if (!isKeysetError(error) || error.code !== 'rate_limited') throw error;
            admitted = false;
          }
          expect(admitted).toBe(expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("an owner's limit is shared by its keys: admitted over all keys ≤ the owner's limit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 10 }), fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 60 }), async (limit, picks) => {
        const limiter = createRateLimiter({ store: createMemoryRateLimitStore({ clock: () => NOW }), defaultPolicy: { limit: 1000, windowSeconds: 60 }, clock: () => NOW, logger: { warn() {} } });
        const owner = { id: 'cus_2', rateLimits: [{ name: 'minute', limit, windowSeconds: 60 }] };
        let admitted = 0;
        for (const n of picks) {
          await limiter.check(`key_${n}`, undefined, { owner }).then(
            () => admitted++,
            () => undefined,
          );
        }
        expect(admitted).toBe(Math.min(limit, picks.length));
      }),
    );
  });

  it('a key without an owner, or an owner without limits, is decided as before', async () => {
    const limiter = createRateLimiter({ store: createMemoryRateLimitStore({ clock: () => NOW }), defaultPolicy: { limit: 2, windowSeconds: 60 }, clock: () => NOW, logger: { warn() {} } });
    const a = await limiter.check('key_a', undefined, { owner: { id: 'o', rateLimits: null } });
    expect(a.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    const b = await limiter.check('key_a', undefined, {});
    expect(b.headers['ratelimit-policy']).toBe('"default";q=2;w=60');
  });
});
