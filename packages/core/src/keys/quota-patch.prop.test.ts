import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Quota, QuotaRefill } from '../quota/types.ts';
import { applyQuotaPatch, type QuotaPatch } from './quota-patch.ts';

const refillArb: fc.Arbitrary<QuotaRefill | null> = fc.option(
  fc.record({ amount: fc.integer({ min: 1, max: 1000 }), interval: fc.oneof(fc.constantFrom('daily' as const, 'monthly' as const), fc.integer({ min: 1, max: 86_400 })) }),
);
const instantArb = fc.integer({ min: 0, max: 2 ** 40 });
const quotaArb: fc.Arbitrary<Quota> = fc.record({ remaining: fc.nat(1000), refill: refillArb, setAt: instantArb.map((ms) => new Date(ms)) });
const patchArb: fc.Arbitrary<QuotaPatch> = fc.record(
  { remaining: fc.nat(1000), refill: refillArb, setAt: instantArb.map((ms) => new Date(ms)) },
  { requiredKeys: ['remaining', 'setAt'] },
);

describe('applyQuotaPatch', () => {
  it('any sequence of updates: each setAt is later than the one before, and a refill left out is kept', () => {
    fc.assert(
      fc.property(fc.option(quotaArb), fc.array(patchArb, { minLength: 1, maxLength: 8 }), (start, patches) => {
        let current = start;
        for (const patch of patches) {
          const next = applyQuotaPatch(current, patch);
          expect(next.remaining).toBe(patch.remaining);
          expect(next.setAt.getTime()).toBeGreaterThanOrEqual(patch.setAt.getTime());
          if (current !== null) expect(next.setAt.getTime()).toBeGreaterThan(current.setAt.getTime());
          expect(next.refill).toEqual(patch.refill === undefined ? (current?.refill ?? null) : patch.refill);
          current = next;
        }
      }),
    );
  });
});
