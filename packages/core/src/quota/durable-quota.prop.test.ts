import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLaterQuotaState, laterQuotaState } from './durable-quota.ts';
import { applyQuotaSpend, type QuotaState } from './quota-period.ts';

const state = fc.record({ generation: fc.integer({ min: 0, max: 4 }), period: fc.integer({ min: 0, max: 4 }), remaining: fc.integer({ min: 0, max: 20 }) });
const spend = fc.record({
  generation: fc.integer({ min: 0, max: 5 }),
  initial: fc.integer({ min: 0, max: 20 }),
  period: fc.integer({ min: 0, max: 5 }),
  refillAmount: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
  cost: fc.integer({ min: 0, max: 6 }),
});

describe('durable quota order', () => {
  it('every transition of applyQuotaSpend moves a state forward or leaves it: a merge never undoes a spend', () => {
    fc.assert(
      fc.property(fc.option(state, { nil: undefined }), spend, (stored, s) => {
        const { state: next } = applyQuotaSpend(stored, { key: 'k', ...s });
        if (stored !== undefined) expect(isLaterQuotaState(stored, next)).toBe(false);
        expect(laterQuotaState(stored, next)).toEqual(next);
      }),
      { numRuns: 500 },
    );
  });

  it('merging is a total order: commutative, associative, idempotent', () => {
    fc.assert(
      fc.property(state, state, state, (a, b, c) => {
        expect(laterQuotaState(a, b)).toEqual(laterQuotaState(b, a));
        expect(laterQuotaState(laterQuotaState(a, b), c)).toEqual(laterQuotaState(a, laterQuotaState(b, c)));
        expect(laterQuotaState(a, a)).toEqual(a);
        expect(laterQuotaState(a, undefined)).toBe(a);
      }),
      { numRuns: 500 },
    );
  });

  it('a count rebuilt from a lagging durable state admits at most what was spent since that state', () => {
    // Spend through a sequence, "flush" at some step, lose the live state at a later step,
    // rebuild from the flushed one and go on: the spending admitted in all exceeds the
    // budget by at most what was admitted between the flush and the loss.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 2, maxLength: 60 }), fc.nat(), fc.nat(), (credits, costs, f, l) => {
        const flushAt = f % costs.length;
        const lossAt = flushAt + (l % (costs.length - flushAt));
        let live: QuotaState | undefined;
        let durable: QuotaState | undefined;
        let admitted = 0;
        let sinceFlush = 0;
        let lostSinceFlush = 0;
        costs.forEach((cost, i) => {
          if (i === lossAt) {
            lostSinceFlush = sinceFlush;
            live = durable; // rebuilt from what was flushed
          }
          const out = applyQuotaSpend(live, { key: 'k', generation: 1, initial: credits, period: 0, refillAmount: null, cost });
          live = out.state;
          if (out.result.allowed) {
            admitted += cost;
            sinceFlush += cost;
          }
          if (i === flushAt) {
            durable = laterQuotaState(durable, live);
            sinceFlush = 0;
          }
        });
        expect(admitted).toBeLessThanOrEqual(credits + lostSinceFlush);
      }),
      { numRuns: 500 },
    );
  });
});
