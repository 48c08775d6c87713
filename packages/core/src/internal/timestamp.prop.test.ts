/**
 * `parseTimestamp` and `isTimestamp` against the rules written out once more as an oracle
 * (a looser regular expression, every range checked on the numbers): the same
 * accept/reject and the same instant, on random text built from the format's own pieces
 * (so valid, almost-valid and broken inputs all occur often). The module folds the ranges
 * into its pattern and skips the calendar for days up to 28; this is what holds it to
 * the plain reading.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTimestamp, parseTimestamp, type Instant } from './timestamp.ts';

// The oracle: the format's shape, and its ranges checked on the numbers.
const PATTERN =
  /^(\d{4}|[1-9]\d{4,5})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)?( BC)?$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}
function byPattern(text: string): Instant | undefined {
  if (text === 'infinity') return { seconds: Infinity, micros: 0 };
  if (text === '-infinity') return { seconds: -Infinity, micros: 0 };
  const m = PATTERN.exec(text);
  if (m === null) return undefined;
  const written = Number(m[1]);
  const year = m[13] === undefined ? written : 1 - written;
  if (written < 1) return undefined;
  const [month, day, hour, minute, second] = [m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return undefined;
  let offset = 0;
  if (m[9] !== undefined) {
    const [oh, om, os] = [Number(m[10]), Number(m[11] ?? 0), Number(m[12] ?? 0)];
    if (oh > 15 || om > 59 || os > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60 + os);
  }
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0'));
  return { seconds: daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset, micros };
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const noise = fc.string({ unit: fc.constantFrom(...'0123456789-:+. TZBCx\u0660'), maxLength: 3 });
/** A timestamp assembled from the format's pieces, each piece sometimes replaced by noise. */
const piecewise = fc
  .tuple(
    fc.oneof(digits(4, 4), digits(1, 7)),
    fc.oneof(digits(2, 2), digits(1, 3)),
    fc.oneof(digits(2, 2), noise),
    fc.constantFrom('T', ' ', 't', '_'),
    fc.oneof(digits(2, 2), noise),
    fc.oneof(digits(2, 2), digits(1, 3)),
    fc.oneof(digits(2, 2), noise),
    fc.oneof(fc.constant(''), digits(0, 8).map((d) => `.${d}`)),
    fc.oneof(
      fc.constant(''),
      fc.constant('Z'),
      fc.tuple(fc.constantFrom('+', '-'), digits(0, 3), fc.constantFrom('', ':'), digits(0, 3), fc.constantFrom('', ':'), digits(0, 3)).map((p) => p.join('')),
      noise,
    ),
    fc.constantFrom('', ' BC', ' BC ', 'BC', ' bc', '\n'),
  )
  .map(([y, mo, d, sep, h, mi, s, f, z, bc]) => `${y}-${mo}-${d}${sep}${h}:${mi}:${s}${f}${z}${bc}`);

describe('parseTimestamp and isTimestamp agree with the rules written out', () => {
  it('on timestamps assembled from valid and broken pieces', () => {
    fc.assert(
      fc.property(piecewise, (text) => {
        expect(parseTimestamp(text)).toEqual(byPattern(text));
        expect(isTimestamp(text)).toBe(byPattern(text) !== undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it('on arbitrary text and on valid timestamps with one character changed', () => {
    for (const text of ['infinity', '-infinity', 'Infinity', '+infinity', 'infinity BC']) {
      expect(parseTimestamp(text)).toEqual(byPattern(text));
      expect(isTimestamp(text)).toBe(byPattern(text) !== undefined);
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        expect(parseTimestamp(text)).toEqual(byPattern(text));
        expect(isTimestamp(text)).toBe(byPattern(text) !== undefined);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.constantFrom('2024-05-01 10:00:00.123456+05:30', '2024-02-29T23:59:59Z', '10000-01-01 05:45:00+05:45', '0044-03-15 17:41:16+05:41:16 BC', '2024-05-01 10:00:00'),
        fc.nat(),
        fc.constantFrom(...'0123456789-:+. TZB'),
        (text, at, c) => {
          const i = at % (text.length + 1);
          for (const variant of [text.slice(0, i) + c + text.slice(i + 1), text.slice(0, i) + c + text.slice(i), text.slice(0, i) + text.slice(i + 1)]) {
            expect(parseTimestamp(variant)).toEqual(byPattern(variant));
            expect(isTimestamp(variant)).toBe(byPattern(variant) !== undefined);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('on every prefix of valid timestamps, and with a digit replaced by a neighbour of the digits', () => {
    // Each place, the text's end, and the characters either side of '0'-'9' ('/', ':', and
    // '0' plus 0x100, whose low byte is a digit) are where a reader could go wrong.
    const valid = fc.constantFrom(
      '2026-01-01T00:00:01.123456Z',
      '2024-05-01 10:00:00.123456+00',
      '2024-02-29 23:59:59+05:30',
      '10000-01-01 05:45:00+05:45',
      '294276-12-31 23:59:59.999999Z',
      '0044-03-15 17:41:16+05:41:16 BC',
      '2024-05-01 10:00:00',
      '1999-12-31T23:59:59.9-0800',
    );
    fc.assert(
      fc.property(valid, fc.nat(), fc.constantFrom('/', ':', '\u0130', '\u0139', '\u0660', '9', '0'), (text, at, c) => {
        const i = at % (text.length + 1);
        for (const variant of [text.slice(0, i), text.slice(0, i) + c + text.slice(i + 1)]) {
          expect(parseTimestamp(variant)).toEqual(byPattern(variant));
          expect(isTimestamp(variant)).toBe(byPattern(variant) !== undefined);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
