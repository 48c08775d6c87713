/**
 * PostgreSQL `timestamptz` text as ISO 8601 in UTC with all six fractional digits, for a
 * driver's type parser: what a JSON client can parse, the same text in the items and in the
 * cursor, exact to the microsecond (a JS `Date` keeps milliseconds only).
 * @module
 */
import { parseTimestamp } from '../internal/timestamp.ts';

/**
 * `2025-01-01 05:45:00.1237+05:45` → `2025-01-01T00:00:00.123700Z`: any zone PostgreSQL
 * prints (the session's `TimeZone` does not matter), any number of fractional digits.
 * Years outside 0001–9999 (BC dates, `10000-…`) and `infinity` / `-infinity`, which ISO's
 * four-digit form cannot spell, come back as printed: keyset reads those too. Text that is
 * no timestamp at all comes back unchanged.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const TIMESTAMPTZ = 1184;
 * const pool = new pg.Pool({
 *   types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === TIMESTAMPTZ ? isoTimestamp : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
 * });
 * isoTimestamp('2025-01-01 00:00:00.123789+00'); // '2025-01-01T00:00:00.123789Z'
 * ```
 */
export function isoTimestamp(text: string): string {
  const instant = parseTimestamp(text);
  if (instant === undefined || !Number.isFinite(instant.seconds)) return text;
  const days = Math.floor(instant.seconds / 86_400);
  const { year, month, day } = civilFromDays(days);
  if (year < 1 || year > 9999) return text;
  let rest = instant.seconds - days * 86_400;
  const hour = Math.floor(rest / 3600);
  rest -= hour * 3600;
  const minute = Math.floor(rest / 60);
  const second = rest - minute * 60;
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${two(hour)}:${two(minute)}:${two(second)}.${String(instant.micros).padStart(6, '0')}Z`;
}

/** The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}
