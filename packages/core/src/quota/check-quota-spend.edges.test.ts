/**
 * Each check of `checkQuotaSpend(s)` at its bound and just past it, with the exact
 * message a store's caller sees: a programming mistake is a `ConfigError`, never a
 * corrupted count.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { checkQuotaSpend, checkQuotaSpends } from './check-quota-spend.ts';
import { MAX_QUOTA_COST, MAX_QUOTA_CREDITS } from './quota-period.ts';
import type { QuotaSpend } from './types.ts';

const SPEND: QuotaSpend = { key: 'key_1', generation: 0, initial: 10, period: 0, refillAmount: null, cost: 1 };
const refusal = (request: unknown): string => {
  try {
    checkQuotaSpend(request as QuotaSpend);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('checkQuotaSpend edges', () => {
  it('accepts every field at its bounds', () => {
    const low = { ...SPEND, generation: 0, initial: 0, period: 0, refillAmount: 1, cost: 0 };
    const high = { ...SPEND, key: 'k', generation: Number.MAX_SAFE_INTEGER, initial: MAX_QUOTA_CREDITS, period: Number.MAX_SAFE_INTEGER, refillAmount: MAX_QUOTA_CREDITS, cost: MAX_QUOTA_COST, partition: 'p' };
    expect(() => checkQuotaSpend(low)).not.toThrow();
    expect(() => checkQuotaSpend(high)).not.toThrow();
    expect(() => checkQuotaSpend({ ...SPEND, partition: undefined } as unknown as QuotaSpend)).not.toThrow();
  });

  it('refuses a missing request, an empty or non-string key', () => {
    expect(refusal(undefined)).toBe('A quota key must be a non-empty string');
    expect(refusal(null)).toBe('A quota key must be a non-empty string');
    expect(refusal({ ...SPEND, key: '' })).toBe('A quota key must be a non-empty string');
    expect(refusal({ ...SPEND, key: 1 })).toBe('A quota key must be a non-empty string');
  });

  it('refuses each number just past its bound, naming it and what it got', () => {
    expect(refusal({ ...SPEND, generation: -1 })).toBe('quota generation must be a non-negative integer, got -1');
    expect(refusal({ ...SPEND, generation: 2 ** 53 })).toBe('quota generation must be a non-negative integer, got 9007199254740992');
    expect(refusal({ ...SPEND, generation: 0.5 })).toBe('quota generation must be a non-negative integer, got 0.5');
    expect(refusal({ ...SPEND, initial: -1 })).toBe('quota initial credits must be an integer from 0 to 1000000000000000, got -1');
    expect(refusal({ ...SPEND, initial: MAX_QUOTA_CREDITS + 1 })).toBe('quota initial credits must be an integer from 0 to 1000000000000000, got 1000000000000001');
    expect(refusal({ ...SPEND, period: -1 })).toBe('quota period must be a non-negative integer, got -1');
    expect(refusal({ ...SPEND, period: '1' })).toBe('quota period must be a non-negative integer, got 1');
    expect(refusal({ ...SPEND, refillAmount: 0 })).toBe('quota refill amount must be null or an integer from 1 to 1000000000000000, got 0');
    expect(refusal({ ...SPEND, refillAmount: MAX_QUOTA_CREDITS + 1 })).toBe('quota refill amount must be null or an integer from 1 to 1000000000000000, got 1000000000000001');
    expect(refusal({ ...SPEND, refillAmount: undefined })).toBe('quota refill amount must be null or an integer from 1 to 1000000000000000, got undefined');
    expect(refusal({ ...SPEND, cost: -1 })).toBe('cost must be an integer from 0 to 1000000, got -1');
    expect(refusal({ ...SPEND, cost: MAX_QUOTA_COST + 1 })).toBe('cost must be an integer from 0 to 1000000, got 1000001');
  });

  it('refuses an empty or non-string partition', () => {
    expect(refusal({ ...SPEND, partition: '' })).toBe('A quota partition must be a non-empty string when given');
    expect(refusal({ ...SPEND, partition: 1 })).toBe('A quota partition must be a non-empty string when given');
  });
});

describe('checkQuotaSpends edges', () => {
  const refusals = (requests: unknown): string => {
    try {
      checkQuotaSpends(requests as QuotaSpend[]);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('accepts one spend and several of distinct keys', () => {
    expect(() => checkQuotaSpends([SPEND])).not.toThrow();
    expect(() => checkQuotaSpends([SPEND, { ...SPEND, key: 'owner:o' }])).not.toThrow();
  });

  it('refuses an empty list, a non-list, a bad spend and a repeated key', () => {
    expect(refusals([])).toBe('spendAll needs a non-empty list of quota spends');
    expect(refusals({ 0: SPEND, length: 1 })).toBe('spendAll needs a non-empty list of quota spends');
    expect(refusals([SPEND, { ...SPEND, key: 'k2', cost: -1 }])).toBe('cost must be an integer from 0 to 1000000, got -1');
    expect(refusals([SPEND, { ...SPEND, key: 'k2' }, { ...SPEND, cost: 2 }])).toBe('spendAll needs distinct quota keys');
  });
});
