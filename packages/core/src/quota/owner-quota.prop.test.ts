/**
 * Owner quotas: a request of a key whose owner has a quota spends its cost from
 * the owner's quota and from the key's own (when it has one), all-or-nothing. Checked
 * against a counting model: no refill falls due within a run (one-off budgets, one
 * instant), so each quota is a counter, and a refused request must leave every counter as
 * it was; the counts the store ends with are read back and compared too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError, type KeysetError } from '../errors.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { createMemoryQuotaStore } from './memory-quota-store.ts';
import type { Quota, QuotaStore } from './types.ts';

const NOW = Date.UTC(2026, 0, 1);
const quotaOf = (remaining: number): Quota => Object.freeze({ remaining, refill: null, setAt: new Date(NOW - 1000) });

function limiterWith(quotaStore: QuotaStore, warn: (details: Record<string, unknown>, message: string) => void = () => undefined) {
  return createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 1 }, quotaStore, clock: () => NOW, logger: { warn } });
}

const scenario = fc.record({
  ownerCredits: fc.integer({ min: 0, max: 12 }),
  // Each key: its own credits, or null for no quota of its own.
  keyCredits: fc.array(fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }), { minLength: 1, maxLength: 4 }),
  requests: fc.array(fc.record({ key: fc.nat(), cost: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 40 }),
});

describe('owner quotas, spent with the key quota all-or-nothing (memory store)', () => {
  it('admits exactly what a counting model admits; the owner never spends more than it has; a refusal spends nothing', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ ownerCredits, keyCredits, requests }) => {
        const limiter = limiterWith(createMemoryQuotaStore());
        const owner = Object.freeze({ id: 'cus_1', rateLimits: null, quota: quotaOf(ownerCredits) });
        const keys = keyCredits.map((credits, i) => ({ id: `key_${i}`, quota: credits === null ? null : quotaOf(credits) }));
        const left = keyCredits.map((credits) => credits ?? Infinity);
        let ownerLeft = ownerCredits;
        let ownerSpent = 0;
        for (const { key: n, cost } of requests) {
          const i = n % keys.length;
          const key = keys[i]!;
          const expected = (left[i] as number) >= cost && ownerLeft >= cost;
          if (expected) {
            left[i] = (left[i] as number) - cost;
            ownerLeft -= cost;
          }
          let admitted: boolean;
          try {
            const result = await limiter.check(key.id, undefined, { quota: key.quota, owner, cost });
            admitted = true;
            ownerSpent += result.ownerQuota?.cost ?? 0;
            expect(result.ownerQuota?.remaining).toBe(ownerLeft);
          } catch (error) {
            if (!isKeysetError(error) || error.code !== 'quota_exhausted') throw error;
            admitted = false;
            // Names the quota that ran out: the key's when it is short, else the owner's.
            expect(error.extensions.quota).toBe((left[i] as number) < cost ? 'key' : 'owner');
          }
          expect(admitted).toBe(expected);
          expect(ownerSpent).toBeLessThanOrEqual(ownerCredits);
        }
        // The store holds what the model holds: nothing was spent by a refused request.
        expect((await limiter.readOwnerQuota('cus_1', owner.quota)).remaining).toBe(ownerLeft);
        for (const [i, key] of keys.entries()) {
          if (key.quota !== null) expect((await limiter.readQuota(key.id, key.quota, owner.id)).remaining).toBe(left[i]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('owner with a quota of 5 and three keys: 5 requests admitted, the 6th refused whichever key sends it', async () => {
    for (const sixth of [0, 1, 2]) {
      const limiter = limiterWith(createMemoryQuotaStore());
      const owner = { id: 'cus_5', rateLimits: null, quota: quotaOf(5) };
      const keys = ['key_a', 'key_b', 'key_c'];
      for (let n = 0; n < 5; n++) {
        const result = await limiter.check(keys[n % 3] as string, undefined, { owner });
        expect(result.ownerQuota).toMatchObject({ allowed: true, cost: 1, remaining: 4 - n });
        expect(result.quota).toBeUndefined();
      }
      const error = (await limiter.check(keys[sixth] as string, undefined, { owner }).catch((e: unknown) => e)) as KeysetError;
      expect(error.code).toBe('quota_exhausted');
      expect(error.status).toBe(429);
      expect(error.extensions).toEqual({ quota: 'owner', quota_remaining: 0, cost: 1 });
      expect(error.detail).toMatch(/^Owner's usage quota/);
      // Nothing in the problem names the owner.
      expect(JSON.stringify({ detail: error.detail, extensions: error.extensions })).not.toContain('cus_5');
    }
  });

  it("a key quota short refuses without spending the owner's; an owner quota short refuses without spending the key's", async () => {
    const limiter = limiterWith(createMemoryQuotaStore());
    const owner = { id: 'cus_7', rateLimits: null, quota: quotaOf(10) };
    const keyQuota = quotaOf(2);
    await limiter.check('key_x', undefined, { quota: keyQuota, owner, cost: 2 });
    await expect(limiter.check('key_x', undefined, { quota: keyQuota, owner, cost: 1 })).rejects.toMatchObject({ code: 'quota_exhausted', extensions: { quota: 'key' } });
    expect((await limiter.readOwnerQuota('cus_7', owner.quota)).remaining).toBe(8);
    const rich = quotaOf(100);
    await expect(limiter.check('key_y', undefined, { quota: rich, owner, cost: 9 })).rejects.toMatchObject({ code: 'quota_exhausted', extensions: { quota: 'owner', quota_remaining: 8 } });
    expect((await limiter.readQuota('key_y', rich, 'cus_7')).remaining).toBe(100);
  });

  it("reports the owner's remaining credits to onDecision beside the key's", async () => {
    const events: unknown[] = [];
    const limiter = createRateLimiter({
      defaultPolicy: { limit: 100, windowSeconds: 1 },
      quotaStore: createMemoryQuotaStore(),
      clock: () => NOW,
      onDecision: (e) => void events.push(e),
    });
    const owner = { id: 'cus_8', rateLimits: null, quota: quotaOf(1) };
    await limiter.check('key_1', undefined, { quota: quotaOf(5), owner });
    await limiter.check('key_1', undefined, { quota: quotaOf(5), owner }).catch(() => undefined);
    expect(events).toMatchObject([
      { outcome: 'allowed', cost: 1, quotaRemaining: 4, ownerQuotaRemaining: 0 },
      { outcome: 'quota_exhausted', policy: 'owner.quota', cost: 0, quotaRemaining: 4, ownerQuotaRemaining: 0 },
    ]);
  });

  it('a quota store without spendAll refuses a request with an owner quota (503), never spending in two steps', async () => {
    const memory = createMemoryQuotaStore();
    const warnings: string[] = [];
    const limiter = limiterWith({ spend: (r) => memory.spend(r) }, (_, message) => warnings.push(message));
    const owner = { id: 'cus_9', rateLimits: null, quota: quotaOf(5) };
    for (let n = 0; n < 2; n++) {
      await expect(limiter.check('key_1', undefined, { quota: quotaOf(5), owner })).rejects.toMatchObject({ code: 'unavailable', status: 503 });
    }
    expect(warnings.filter((m) => m.includes('spendAll'))).toHaveLength(1);
    expect(memory.size).toBe(0);
    // A key quota alone still works through spend().
    await expect(limiter.check('key_1', undefined, { quota: quotaOf(5), owner: { id: 'cus_9', rateLimits: null } })).resolves.toMatchObject({ quota: { remaining: 4 } });
  });

  it('without owner or key quota, the check asks the quota store nothing and reports no quota', async () => {
    const memory = createMemoryQuotaStore();
    let calls = 0;
    const limiter = limiterWith({ spend: (r) => (calls++, memory.spend(r)), spendAll: (r) => (calls++, memory.spendAll!(r)) });
    const result = await limiter.check('key_1', undefined, { owner: { id: 'cus_0', rateLimits: null, quota: null }, cost: 3 });
    expect(result.headers.ratelimit).toBeDefined();
    expect(result.quota).toBeUndefined();
    expect(result.ownerQuota).toBeUndefined();
    expect(calls).toBe(0);
  });
});
