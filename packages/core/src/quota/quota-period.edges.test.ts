/**
 * The quota arithmetic at its edges: the exact validation messages and the values just
 * inside and outside each bound, the owner's store key, `applyQuotaSpend`'s choice between
 * restart, refill and neither, and `applyQuotaSpends` all-or-nothing.
 */
import { describe, expect, it } from 'vitest';
import { applyQuotaSpend, applyQuotaSpends, MAX_QUOTA_CREDITS, ownerQuotaKey, quotaIntervalProblem, quotaProblem, type QuotaState } from './quota-period.ts';
import type { QuotaSpend } from './types.ts';

const YEAR_SECONDS = 366 * 86_400;
const intervalMessage = (got: string): string => `interval must be 'daily', 'monthly' or a whole number of seconds from 1 to 31622400, got ${got}`;

describe('ownerQuotaKey', () => {
  it('is owner: and the owner id', () => {
    expect(ownerQuotaKey('cus_42')).toBe('owner:cus_42');
  });
});

describe('quotaIntervalProblem edges', () => {
  it('accepts daily, monthly, 1 second and 366 days', () => {
    for (const interval of ['daily', 'monthly', 1, YEAR_SECONDS]) expect(quotaIntervalProblem(interval)).toBeUndefined();
  });

  it('refuses 0 seconds, 366 days and a second, fractions and other words, quoting what it got', () => {
    expect(quotaIntervalProblem(0)).toBe(intervalMessage('0'));
    expect(quotaIntervalProblem(YEAR_SECONDS + 1)).toBe(intervalMessage('31622401'));
    expect(quotaIntervalProblem(1.5)).toBe(intervalMessage('1.5'));
    expect(quotaIntervalProblem('weekly')).toBe(intervalMessage('"weekly"'));
    expect(quotaIntervalProblem('')).toBe(intervalMessage('""'));
  });
});

describe('quotaProblem edges', () => {
  it('accepts remaining 0 and 10^15, refill absent or null, amount 1 and 10^15', () => {
    expect(quotaProblem({ remaining: 0 })).toBeUndefined();
    expect(quotaProblem({ remaining: MAX_QUOTA_CREDITS, refill: null })).toBeUndefined();
    expect(quotaProblem({ remaining: 5, refill: { amount: 1, interval: 'daily' } })).toBeUndefined();
    expect(quotaProblem({ remaining: 5, refill: { amount: MAX_QUOTA_CREDITS, interval: YEAR_SECONDS } })).toBeUndefined();
  });

  it('refuses a quota that is not an object', () => {
    for (const quota of [null, undefined, 5, 'quota']) expect(quotaProblem(quota)).toBe('a quota must be an object { remaining, refill? }');
  });

  it('refuses remaining and refill.amount just past their bounds', () => {
    expect(quotaProblem({ remaining: -1 })).toBe('remaining must be an integer from 0 to 1000000000000000, got -1');
    expect(quotaProblem({ remaining: MAX_QUOTA_CREDITS + 1 })).toBe('remaining must be an integer from 0 to 1000000000000000, got 1000000000000001');
    expect(quotaProblem({ remaining: 1, refill: { amount: 0, interval: 'daily' } })).toBe('refill.amount must be an integer from 1 to 1000000000000000, got 0');
    expect(quotaProblem({ remaining: 1, refill: { amount: MAX_QUOTA_CREDITS + 1, interval: 'daily' } })).toBe(
      'refill.amount must be an integer from 1 to 1000000000000000, got 1000000000000001',
    );
  });

  it('refuses a refill that is not an object, and names the refill interval', () => {
    expect(quotaProblem({ remaining: 1, refill: 'daily' })).toBe('refill must be an object { amount, interval } or null');
    expect(quotaProblem({ remaining: 1, refill: { amount: 1, interval: 'weekly' } })).toBe(`refill.${intervalMessage('"weekly"')}`);
  });
});

const spend = (fields: Partial<QuotaSpend>): QuotaSpend => ({ key: 'k', generation: 1, initial: 5, period: 0, refillAmount: 10, cost: 1, ...fields });

describe('applyQuotaSpend edges', () => {
  it('restarts the count for a newer generation, whatever was stored', () => {
    const stored: QuotaState = { generation: 1, period: 7, remaining: 0 };
    expect(applyQuotaSpend(stored, spend({ generation: 2, period: 0, initial: 5 }))).toEqual({
      state: { generation: 2, period: 0, remaining: 4 },
      result: { allowed: true, remaining: 4 },
    });
  });

  it('never refills for an older generation (a stale cached key), even in a later period', () => {
    const stored: QuotaState = { generation: 2, period: 0, remaining: 0 };
    expect(applyQuotaSpend(stored, spend({ generation: 1, period: 3 }))).toEqual({ state: stored, result: { allowed: false, remaining: 0 } });
  });

  it('never refills a quota without a refill, nor in the same period', () => {
    const stored: QuotaState = { generation: 1, period: 0, remaining: 2 };
    expect(applyQuotaSpend(stored, spend({ period: 3, refillAmount: null, cost: 3 }))).toEqual({ state: stored, result: { allowed: false, remaining: 2 } });
    expect(applyQuotaSpend(stored, spend({ period: 0, cost: 1 }))).toEqual({
      state: { generation: 1, period: 0, remaining: 1 },
      result: { allowed: true, remaining: 1 },
    });
  });

  it('refills to the refill amount in a later period, then spends', () => {
    const stored: QuotaState = { generation: 1, period: 0, remaining: 0 };
    expect(applyQuotaSpend(stored, spend({ period: 1, refillAmount: 10, cost: 10 }))).toEqual({
      state: { generation: 1, period: 1, remaining: 0 },
      result: { allowed: true, remaining: 0 },
    });
  });
});

describe('applyQuotaSpends edges', () => {
  it('spends every cost when each count covers its own, a cost equal to what is left included', () => {
    const stored = [{ generation: 1, period: 0, remaining: 3 }, undefined];
    expect(applyQuotaSpends(stored, [spend({ cost: 3 }), spend({ key: 'owner:o', initial: 10, cost: 4 })])).toEqual({
      states: [
        { generation: 1, period: 0, remaining: 0 },
        { generation: 1, period: 0, remaining: 6 },
      ],
      results: [
        { allowed: true, remaining: 0 },
        { allowed: true, remaining: 6 },
      ],
    });
  });

  it('spends none when one count is short, and still applies the refills and starts that fell due', () => {
    const stored = [{ generation: 1, period: 0, remaining: 0 }, { generation: 1, period: 0, remaining: 2 }];
    expect(applyQuotaSpends(stored, [spend({ period: 1, refillAmount: 10, cost: 1 }), spend({ key: 'owner:o', cost: 3 })])).toEqual({
      states: [
        { generation: 1, period: 1, remaining: 10 },
        { generation: 1, period: 0, remaining: 2 },
      ],
      results: [
        { allowed: true, remaining: 10 },
        { allowed: false, remaining: 2 },
      ],
    });
  });

  it('leaves the stored states untouched', () => {
    const first = { generation: 1, period: 0, remaining: 3 };
    applyQuotaSpends([first], [spend({ cost: 1 })]);
    expect(first).toEqual({ generation: 1, period: 0, remaining: 3 });
  });
});
