/**
 * Every value PostgreSQL prints for a `timestamptz`, kept and compared exactly. Expected
 * epochs are PostgreSQL's own (`extract(epoch from …)`), so they share no code with the parser.
 */
import { describe, expect, it } from 'vitest';
import type { SortKey } from '../pagination/types.ts';
import { compareKey, isSortValue, toComparable, toSortValue } from './sort-values.ts';
import { isTimestamp, parseTimestamp } from './timestamp.ts';

// A Date is exact for a key declared millisecond-precise (any other key refuses it: sort-values.test.ts).
const key: SortKey = { key: 't', dir: 'asc', type: 'timestamp', nullable: false, precision: 'ms' };
const micros = (text: string): bigint => toComparable('timestamp', text) as bigint;

describe('PostgreSQL timestamptz text outside 0001–9999', () => {
  it.each([
    ['0044-03-15 12:00:00+00 BC', -63_517_780_800_000_000n],
    ['0044-03-15 17:41:16+05:41:16 BC', -63_517_780_800_000_000n],
    ['0001-12-31 23:59:59.999999+00 BC', -62_135_596_800_000_001n],
    ['4713-01-01 05:41:16+05:41:16 BC', -210_863_520_000_000_000n],
    ['10000-01-01 05:45:00+05:45', 253_402_300_800_000_000n],
    ['294277-01-01 05:44:59.999999+05:45', 9_224_318_015_999_999_999n],
    ['0999-06-01 00:00:00-00', BigInt(Date.UTC(999, 5, 1)) * 1000n],
  ])('%s is the instant PostgreSQL means', (text, expected) => {
    expect(parseTimestamp(text)).toBeDefined();
    expect(isSortValue(key, text)).toBe(true);
    expect(toSortValue(key, text)).toBe(text);
    expect(micros(text)).toBe(expected);
  });

  it('infinity and -infinity sort after and before every instant', () => {
    for (const text of ['infinity', '-infinity']) {
      expect(isSortValue(key, text)).toBe(true);
      expect(toSortValue(key, text)).toBe(text);
    }
    const order = ['-infinity', '4713-01-01 00:00:00+00 BC', '2024-05-01 10:00:00+00', '294277-01-01 05:44:59.999999+05:45', 'infinity'];
    for (let i = 0; i + 1 < order.length; i++) {
      expect(compareKey(key, micros(order[i]!), micros(order[i + 1]!))).toBe(-1);
    }
    expect(compareKey(key, micros('infinity'), micros('infinity'))).toBe(0);
  });

  it('still refuses what PostgreSQL would not print', () => {
    for (const text of ['0000-01-01 00:00:00+00', '0000-01-01 00:00:00+00 BC', '01000-01-01 00:00:00+00', '10000-01-01 00:00:00+00BC', 'Infinity', '+infinity', '2024-05-01 10:00:00+00 AD', '1234567-01-01 00:00:00+00']) {
      expect(parseTimestamp(text)).toBeUndefined();
    }
  });

  it('serialises a Date of any year to text PostgreSQL reads back as the same instant', () => {
    const cases: [Date, string][] = [
      [new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 123)), '2024-05-01T10:00:00.123000Z'],
      [new Date('+010000-01-01T00:00:00.000Z'), '10000-01-01T00:00:00.000000Z'],
      [new Date('-000043-03-15T12:00:00.000Z'), '0044-03-15T12:00:00.000000Z BC'],
      [new Date('0000-12-31T23:59:59.999Z'), '0001-12-31T23:59:59.999000Z BC'],
    ];
    for (const [date, text] of cases) {
      expect(toSortValue(key, date)).toBe(text);
      expect(micros(text)).toBe(BigInt(date.getTime()) * 1000n);
    }
  });

  it.each([
    ['2024-02-29 10:00:00+00', true],
    ['2023-02-29 10:00:00+00', false],
    ['2000-02-29T00:00:00Z', true],
    ['2100-02-29T00:00:00Z', false],
    ['2024-04-30 00:00:00', true],
    ['2024-04-31 00:00:00', false],
    ['2024-12-31 23:59:59.999999+00', true],
    ['10000-02-29 00:00:00+00', true],
    ['10001-02-29 00:00:00+00', false],
    ['0001-02-29 00:00:00+00 BC', true],
    ['0002-02-29 00:00:00+00 BC', false],
  ])('knows the length of the month: %s', (text, valid) => {
    expect(isTimestamp(text)).toBe(valid);
    expect(parseTimestamp(text) !== undefined).toBe(valid);
  });
});
