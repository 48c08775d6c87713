import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyQuotaSpend, quotaPeriod, quotaPeriodStart, quotaProblem, quotaSpend, type QuotaState } from './quota-period.ts';
import type { QuotaInterval } from './types.ts';

const utc = (text: string): number => Date.parse(text);

describe('quota periods', () => {
  it('monthly is the calendar month in UTC: the refill is at 00:00 UTC on the 1st', () => {
    const jan31 = quotaPeriod('monthly', utc('2026-01-31T23:59:59.999Z'), 0);
    const feb1 = quotaPeriod('monthly', utc('2026-02-01T00:00:00.000Z'), 0);
    expect(feb1).toBe(jan31 + 1);
    expect(new Date(quotaPeriodStart('monthly', feb1, 0)).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    // December → January crosses a year; February of a leap year has 29 days.
    const dec = quotaPeriod('monthly', utc('2027-12-15T12:00:00Z'), 0);
    expect(new Date(quotaPeriodStart('monthly', dec + 1, 0)).toISOString()).toBe('2028-01-01T00:00:00.000Z');
    expect(quotaPeriod('monthly', utc('2028-02-29T23:00:00Z'), 0)).toBe(quotaPeriod('monthly', utc('2028-02-01T00:00:00Z'), 0));
    // A time zone east of UTC is already in March: the period is still February.
    expect(quotaPeriod('monthly', utc('2028-03-01T05:00:00+09:00'), 0)).toBe(quotaPeriod('monthly', utc('2028-02-15T00:00:00Z'), 0));
  });

  it('daily is the UTC day; N seconds count from when the quota was set', () => {
    expect(quotaPeriod('daily', utc('2026-05-01T23:59:59.999Z'), 0) + 1).toBe(quotaPeriod('daily', utc('2026-05-02T00:00:00Z'), 0));
    const setAt = utc('2026-05-01T10:00:00.500Z');
    expect(quotaPeriod(60, setAt, setAt)).toBe(0);
    expect(quotaPeriod(60, setAt + 59_999, setAt)).toBe(0);
    expect(quotaPeriod(60, setAt + 60_000, setAt)).toBe(1);
    expect(quotaPeriodStart(60, 2, setAt)).toBe(setAt + 120_000);
  });

  it('quotaPeriodStart inverts quotaPeriod: every instant lies in [start(p), start(p + 1))', () => {
    const interval = fc.oneof(fc.constant<QuotaInterval>('daily'), fc.constant<QuotaInterval>('monthly'), fc.integer({ min: 1, max: 31 * 86_400 }));
    fc.assert(
      fc.property(interval, fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 0, max: 10 ** 10 }), (iv, setAt, delta) => {
        const at = setAt + delta;
        const p = quotaPeriod(iv, at, setAt);
        expect(quotaPeriodStart(iv, p, setAt)).toBeLessThanOrEqual(at);
        expect(quotaPeriodStart(iv, p + 1, setAt)).toBeGreaterThan(at);
      }),
      { numRuns: 300 },
    );
  });

  it('a first spend in a later period than the one the quota was set in starts from the refill amount', () => {
    const setAt = new Date('2026-01-20T00:00:00Z');
    const quota = { remaining: 3, refill: { amount: 100, interval: 'monthly' as const }, setAt };
    expect(quotaSpend('k', quota, 1, utc('2026-01-25T00:00:00Z'))).toMatchObject({ initial: 3, refillAmount: 100 });
    expect(quotaSpend('k', quota, 1, utc('2026-02-02T00:00:00Z'))).toMatchObject({ initial: 100 });
    expect(quotaSpend('k', { ...quota, refill: null }, 2, utc('2030-01-01T00:00:00Z'))).toEqual({
      key: 'k', generation: setAt.getTime(), initial: 3, period: 0, refillAmount: null, cost: 2,
    });
  });

  it('validates quotas with a message that names the field', () => {
    expect(quotaProblem({ remaining: 10, refill: { amount: 10, interval: 'monthly' } })).toBeUndefined();
    expect(quotaProblem({ remaining: 0 })).toBeUndefined();
    expect(quotaProblem({ remaining: -1 })).toMatch(/remaining/);
    expect(quotaProblem({ remaining: 1, refill: { amount: 0, interval: 'daily' } })).toMatch(/refill\.amount/);
    expect(quotaProblem({ remaining: 1, refill: { amount: 1, interval: 'weekly' } })).toMatch(/refill\.interval/);
    expect(quotaProblem({ remaining: 1, refill: { amount: 1, interval: 0 } })).toMatch(/refill\.interval/);
  });
});

describe('applyQuotaSpend (the model every store follows)', () => {
  it('sequentially: a spend is refused exactly when it does not fit, and the total never exceeds credits plus refills', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.record({ cost: fc.integer({ min: 0, max: 8 }), advance: fc.integer({ min: 0, max: 1 }) }), { maxLength: 60 }),
        (credits, amount, steps) => {
          // The count starts when first met (quotaSpend already chose `initial` for that period).
          let state: QuotaState | undefined = applyQuotaSpend(undefined, { key: 'k', generation: 1, initial: credits, period: 0, refillAmount: amount, cost: 0 }).state;
          let period = 0;
          let budget = credits;
          let spent = 0;
          let expected = credits;
          for (const { cost, advance } of steps) {
            period += advance;
            if (advance === 1) {
              budget += amount;
              expected = amount;
            }
            const out = applyQuotaSpend(state, { key: 'k', generation: 1, initial: credits, period, refillAmount: amount, cost });
            expect(out.result.allowed).toBe(cost <= expected);
            if (out.result.allowed) {
              spent += cost;
              expected -= cost;
            }
            expect(out.result.remaining).toBe(expected);
            state = out.state;
          }
          expect(spent).toBeLessThanOrEqual(budget);
        },
      ),
      { numRuns: 200 },
    );
  });
});
