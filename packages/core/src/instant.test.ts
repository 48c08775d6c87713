/**
 * parseInstant: RFC 3339 with an offset, a real calendar date and time, and one range,
 * 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z after the offset is applied.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_INSTANT_MS, MIN_INSTANT_MS, isInstantInRange, parseInstant } from './instant.ts';

describe('parseInstant', () => {
  it('needs an offset and a real date and time', () => {
    expect(parseInstant('2030-01-31T00:00:00Z')?.toISOString()).toBe('2030-01-31T00:00:00.000Z');
    expect(parseInstant('2030-01-31t02:00:00.123456789+02:00')?.toISOString()).toBe('2030-01-31T00:00:00.123Z');
    expect(parseInstant('2030-01-31T00:00:00-05:30')?.toISOString()).toBe('2030-01-31T05:30:00.000Z');
    expect(parseInstant('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    for (const text of ['2030-01-31T00:00:00', '2030-02-31T00:00:00Z', '2023-02-29T00:00:00Z', '2030-01-31', '2030-01-31T24:00:00Z', '2030-01-31T23:59:60Z', '2030-13-01T00:00:00Z', '2030-01-31T00:00:00+24:00', '2030-01-31T00:00:00+01:60', '2030-01-31 00:00:00Z', ' 2030-01-31T00:00:00Z', '+02030-01-31T00:00:00Z', '٢٠٣٠-01-31T00:00:00Z']) {
      expect(parseInstant(text), text).toBeUndefined();
    }
  });

  it('takes 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z in UTC, whatever the offset, and nothing outside', () => {
    expect(parseInstant('0001-01-01T00:00:00Z')?.getTime()).toBe(MIN_INSTANT_MS);
    expect(parseInstant('0001-01-01T00:00:00Z')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseInstant('9999-12-31T23:59:59.999Z')?.getTime()).toBe(MAX_INSTANT_MS);
    expect(parseInstant('0001-01-01T23:59:00+23:59')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseInstant('9999-12-31T00:00:59.999-23:59')?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    for (const text of ['0001-01-01T00:00:00+23:59', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01', '0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z', '10000-01-01T00:00:00Z']) {
      expect(parseInstant(text), text).toBeUndefined();
    }
  });

  it('agrees with Date on every instant in range, and refuses every one outside', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_INSTANT_MS - 2 * 86_400_000, max: MAX_INSTANT_MS + 2 * 86_400_000 }), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), (ms, offset) => {
        // `ms` written as local time at `offset` minutes east of UTC.
        const local = new Date(ms + offset * 60_000);
        const year = local.getUTCFullYear();
        if (year < 0 || year > 9999) return;
        const two = (n: number): string => String(Math.abs(n)).padStart(2, '0');
        const text = `${String(year).padStart(4, '0')}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())}T${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}.${String(local.getUTCMilliseconds()).padStart(3, '0')}${offset < 0 ? '-' : '+'}${two(Math.trunc(offset / 60))}:${two(offset % 60)}`;
        const parsed = parseInstant(text);
        if (isInstantInRange(ms)) expect(parsed?.getTime(), text).toBe(ms);
        else expect(parsed, text).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
  });
});
