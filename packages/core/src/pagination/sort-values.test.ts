/** The exact value handling under the comparator and the cursor: timestamps, decimals, bigints. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDecimal } from '../internal/decimal.ts';
import { compareKey, isSortValue, toComparable, toSortValue } from '../internal/sort-values.ts';
import { compareInstants, parseTimestamp } from '../internal/timestamp.ts';
import { ConfigError } from '../errors.ts';
import type { SortKey } from './types.ts';

const key = (type: SortKey['type'], nullable: SortKey['nullable'] = false): SortKey => ({ key: 'v', dir: 'asc', type, nullable });

describe('timestamps', () => {
  it('keeps microseconds that a Date would lose', () => {
    const a = parseTimestamp('2024-05-01 10:00:00.123456+00')!;
    const b = parseTimestamp('2024-05-01 10:00:00.123457+00')!;
    expect(new Date('2024-05-01T10:00:00.123456Z').getTime()).toBe(new Date('2024-05-01T10:00:00.123457Z').getTime());
    expect(compareInstants(a, b)).toBe(-1);
  });

  it('reads PostgreSQL and ISO spellings of one instant as equal', () => {
    const spellings = [
      '2024-05-01 10:00:00.5+00',
      '2024-05-01T10:00:00.500000Z',
      '2024-05-01 12:00:00.5+02',
      '2024-05-01 15:30:00.500+05:30',
      '2024-05-01 05:00:00.5-0500',
    ];
    const [first, ...rest] = spellings.map((s) => parseTimestamp(s)!);
    for (const other of rest) expect(compareInstants(first!, other)).toBe(0);
  });

  it.each([
    'yesterday',
    '2024-05-01',
    '2024-13-01 00:00:00+00',
    '2023-02-29 00:00:00+00',
    '2024-04-31 00:00:00+00',
    '2024-05-01 24:00:00+00',
    '2024-05-01 10:60:00+00',
    '2024-05-01 10:00:60+00',
    '2024-05-01 10:00:00.1234567+00',
    '0000-01-01 00:00:00+00',
    '2024-05-01 10:00:00+16',
    ' 2024-05-01 10:00:00+00',
  ])('refuses %j', (text) => {
    expect(parseTimestamp(text)).toBeUndefined();
  });

  it('reads zone-less text (MySQL DATETIME(6), PostgreSQL timestamp) as UTC', () => {
    expect(parseTimestamp('2024-05-01 10:00:00.000001')).toEqual(parseTimestamp('2024-05-01 10:00:00.000001+00'));
    expect(parseTimestamp('2024-05-01T10:00:00')).toEqual(parseTimestamp('2024-05-01T10:00:00Z'));
  });

  it('accepts 29 February in leap years only', () => {
    expect(parseTimestamp('2024-02-29 00:00:00+00')).toBeDefined();
    expect(parseTimestamp('2000-02-29 00:00:00+00')).toBeDefined();
    expect(parseTimestamp('1900-02-29 00:00:00+00')).toBeUndefined();
  });

  it('orders like Date for millisecond ISO strings (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (a, b) => {
        const x = parseTimestamp(a.toISOString())!;
        const y = parseTimestamp(b.toISOString())!;
        expect(compareInstants(x, y)).toBe(Math.sign(a.getTime() - b.getTime()));
      }),
    );
  });

  it('reads the same epoch instant as Date for ISO strings (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        const { seconds, micros } = parseTimestamp(d.toISOString())!;
        expect(seconds * 1000 + micros / 1000).toBe(d.getTime());
      }),
      { numRuns: 500 },
    );
  });

  it("serialises a Date as ISO with six fractional digits for a key declared precision: 'ms'", () => {
    const ms: SortKey = { ...key('timestamp'), precision: 'ms' };
    expect(toSortValue(ms, new Date('2024-05-01T10:00:00.123Z'))).toBe('2024-05-01T10:00:00.123000Z');
    expect(() => toSortValue(ms, new Date(Number.NaN))).toThrow(TypeError);
  });
});

describe('decimals', () => {
  it.each([
    ['1.5', '1.50', 0],
    ['-0', '0', 0],
    ['-0.000', '0.0', 0],
    ['-0.010', '-0.01', 0],
    ['0.1', '0.09', 1],
    ['-1.1', '-1.09', -1],
    ['10', '9.999', 1],
    ['-10', '9', -1],
    ['123456789012345678901234567890.1', '123456789012345678901234567890.01', 1],
  ])('compare(%s, %s) = %i', (a, b, sign) => {
    expect(compareDecimal(a, b)).toBe(sign);
    expect(compareDecimal(b, a)).toBe(-sign || 0);
  });

  it('orders like exact rationals (property)', () => {
    const dec = fc.tuple(fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }), fc.integer({ min: 0, max: 6 })).map(([units, scale]) => {
      const neg = units < 0n;
      const digits = (neg ? -units : units).toString().padStart(scale + 1, '0');
      const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
      return { text: neg ? `-${text}` : text, value: units * 10n ** BigInt(6 - scale) };
    });
    fc.assert(
      fc.property(dec, dec, (a, b) => {
        expect(compareDecimal(a.text, b.text)).toBe(a.value === b.value ? 0 : a.value < b.value ? -1 : 1);
      }),
      { numRuns: 500 },
    );
  });
});

describe('row values', () => {
  it('accepts bigint ids as bigint, safe number or integer text, and compares them exactly', () => {
    const k = key('bigint');
    expect(toSortValue(k, 2n ** 64n)).toBe('18446744073709551616');
    expect(toSortValue(k, 42)).toBe('42');
    expect(toSortValue(k, '9007199254740993')).toBe('9007199254740993');
    expect(() => toSortValue(k, 2 ** 53)).toThrow(ConfigError);
    expect(() => toSortValue(k, '1.0')).toThrow(TypeError);
    const a = toComparable('bigint', '9007199254740993');
    const b = toComparable('bigint', '9007199254740992');
    expect(compareKey(k, a, b)).toBe(1);
  });

  it('int accepts only safe integers', () => {
    expect(toSortValue(key('int'), 7n)).toBe(7);
    expect(() => toSortValue(key('int'), 2n ** 60n)).toThrow(TypeError);
    expect(() => toSortValue(key('int'), 1.5)).toThrow(TypeError);
    expect(isSortValue(key('int'), 2 ** 53)).toBe(false);
  });

  it('null only for nullable keys, placed first or last whatever the direction', () => {
    expect(() => toSortValue(key('string'), null)).toThrow(/cannot hold null/);
    for (const dir of ['asc', 'desc'] as const) {
      const first: SortKey = { ...key('int', { nulls: 'first' }), dir };
      const last: SortKey = { ...key('int', { nulls: 'last' }), dir };
      expect(compareKey(first, null, 1)).toBe(-1);
      expect(compareKey(last, null, 1)).toBe(1);
      expect(compareKey(last, null, null)).toBe(0);
    }
  });
});

describe('values that may have lost precision on their way from the database are refused, naming the setting to change', () => {
  it('a Date for a timestamp key not declared millisecond-precise (it drops the microseconds)', () => {
    const refusal = () => toSortValue(key('timestamp'), new Date('2024-05-01T10:00:00.123Z'));
    expect(refusal).toThrow(ConfigError);
    expect(refusal).toThrow(/JS Date.*milliseconds.*isoTimestamp.*dateStrings: true.*mode: 'string'.*precision: 'ms'/);
    expect(toSortValue({ ...key('timestamp'), precision: 'us' }, '2024-05-01 10:00:00.123456+00')).toBe('2024-05-01 10:00:00.123456+00');
    expect(() => toSortValue({ ...key('timestamp'), precision: 'us' }, new Date(0))).toThrow(ConfigError);
  });

  it('a JS number past 2^53 for a bigint key (the driver rounded it)', () => {
    for (const n of [2 ** 53, 2 ** 53 + 2, -(2 ** 60), 1e21]) {
      expect(() => toSortValue(key('bigint'), n)).toThrow(ConfigError);
      expect(() => toSortValue(key('bigint'), n)).toThrow(/past 2\^53.*bigNumberStrings: true.*safeIntegers/);
    }
    expect(toSortValue(key('bigint'), 2 ** 53 - 1)).toBe('9007199254740991');
  });

  it('a JS number for a decimal key (about 16 digits where the column may hold more), unless a query helper read it exactly', () => {
    for (const n of [1.5, 0.1, 12345678901234567890, 3]) {
      expect(() => toSortValue(key('decimal'), n)).toThrow(ConfigError);
      expect(() => toSortValue(key('decimal'), n)).toThrow(/16 significant digits.*type: 'number'/);
    }
    expect(toSortValue(key('decimal'), '12345678901234567890.123456789')).toBe('12345678901234567890.123456789');
    expect(toSortValue(key('decimal'), 0.1, true)).toBe('0.1');
  });
});
