/**
 * Instants a client sends (a query's `from`/`to`, a key's `expiresAt`): RFC 3339 with an
 * explicit offset, and one accepted range everywhere, 0001-01-01T00:00:00.000Z to
 * 9999-12-31T23:59:59.999Z after the offset is applied. That is what ISO 8601's four-digit
 * year can spell in UTC and what every store takes: PostgreSQL refuses year 0 and years
 * past 9999 in the ISO text keyset writes (`Date#toISOString` gives `0000-…` and
 * `+010000-…` there), so `0001-01-01T00:00:00+23:59`, whose UTC instant falls on the day
 * before, is refused here with a 400 rather than by the database with a 503.
 * @module
 */

/** 0001-01-01T00:00:00.000Z in epoch milliseconds: the earliest instant keyset takes. */
export const MIN_INSTANT_MS: number = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z in epoch milliseconds: the latest instant keyset takes. */
export const MAX_INSTANT_MS: number = 253_402_300_799_999;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/i;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/** Whether `ms` (epoch milliseconds) is an instant keyset takes: from 0001-01-01Z to the end of 9999 UTC. */
export function isInstantInRange(ms: number): boolean {
  return Number.isFinite(ms) && ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}

/**
 * An RFC 3339 timestamp with an explicit offset (`Z` or `±hh:mm`), as a `Date`, when it is
 * a real calendar date and time (no `02-30`, no `24:00`, no leap second) whose UTC instant
 * lies in 0001-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z; otherwise `undefined`.
 * Local times without an offset are ambiguous and refused. Digits past the millisecond are
 * dropped (a `Date` holds milliseconds).
 *
 * @example
 * ```ts
 * parseInstant('2030-01-31T00:00:00+01:00')?.toISOString(); // '2030-01-30T23:00:00.000Z'
 * parseInstant('0001-01-01T00:00:00+23:59'); // undefined (0000-12-31T00:01Z in UTC)
 * parseInstant('2030-01-31T00:00:00'); // undefined (no offset)
 * ```
 */
export function parseInstant(text: string): Date | undefined {
  const match = typeof text === 'string' ? RFC3339.exec(text) : null;
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(match[i]));
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!) || hour! > 23 || minute! > 59 || second! > 59) return undefined;
  const [sign, offsetHours, offsetMinutes] = [match[9], Number(match[10] ?? 0), Number(match[11] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour!, minute!, second!, Number((match[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const ms = date.getTime() - (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return isInstantInRange(ms) ? new Date(ms) : undefined;
}
