import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SortKey } from '../pagination/types.ts';
import { compareDecimal, DECIMAL_PATTERN } from './decimal.ts';
import { toSortValue } from './sort-values.ts';

const key: SortKey = { key: 'amount', dir: 'asc', type: 'decimal', nullable: false };

// A number a query helper read exactly (a SQLite REAL, the double it holds): taken as it
// is. From a user's row a number is refused (sort-values.test.ts).
describe('decimal sort values from JS numbers read exactly', () => {
  it('accepts numbers that String() writes with an exponent, as plain decimal text', () => {
    // A REAL column (SQLite) hands these over;
    // String(1e-7) is '1e-7', which the decimal pattern refused: a 500 on that page.
    expect(toSortValue(key, 1e-7, true)).toBe('0.0000001');
    expect(toSortValue(key, -2.5e-10, true)).toBe('-0.00000000025');
    expect(toSortValue(key, 1e21, true)).toBe('1000000000000000000000');
    expect(toSortValue(key, 1.5e300, true)).toBe(`15${'0'.repeat(299)}`);
    expect(toSortValue(key, -0, true)).toBe('0');
    expect(() => toSortValue(key, Number.NaN, true)).toThrow(TypeError);
  });

  it('keeps the value and the order of any finite number (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ noNaN: true, noDefaultInfinity: true }), (a, b) => {
        const x = toSortValue(key, a, true) as string;
        const y = toSortValue(key, b, true) as string;
        expect(x).toMatch(DECIMAL_PATTERN);
        expect(Number(x)).toBe(a === 0 ? 0 : a);
        expect(compareDecimal(x, y)).toBe(a === b ? 0 : a < b ? -1 : 1);
      }),
      { numRuns: 2000 },
    );
  });
});
