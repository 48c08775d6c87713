/**
 * Timestamps as text with microseconds, compared exactly. A JS `Date` keeps only
 * milliseconds, so two PostgreSQL `timestamptz` values 1 µs apart would collapse into
 * one and a keyset walk would skip or repeat rows; here they stay apart.
 * Accepted: PostgreSQL's ISO output (`2024-05-01 10:00:00.123456+00`, `+05:30`,
 * `+00:53:28`) and ISO 8601 (`2024-05-01T10:00:00.123456Z`), and everything else a
 * `timestamptz` can print: years past 9999 (`10000-01-01 …`), BC dates (`… BC`, year
 * 1 BC being the year before 1 AD) and `infinity` / `-infinity`.
 * Text without a zone (a MySQL `DATETIME(6)` read with mysql2's `dateStrings`,
 * `2024-05-01 10:00:00.123456`) is read as UTC. A value PostgreSQL can
 * store but the parser refused would become a 500 whenever that row ended a page.
 * @module
 */

/**
 * An instant as whole seconds since the epoch plus microseconds (0–999999);
 * `seconds` is `±Infinity` for PostgreSQL's `infinity` / `-infinity`.
 */
export interface Instant {
  readonly seconds: number;
  readonly micros: number;
}

const INFINITY: Instant = Object.freeze({ seconds: Number.POSITIVE_INFINITY, micros: 0 });
const MINUS_INFINITY: Instant = Object.freeze({ seconds: Number.NEGATIVE_INFINITY, micros: 0 });

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * `YYYY-MM-DD`, `T` or a space, `HH:MM:SS`, up to six fractional digits, an optional zone
 * (`Z`, `±HH`, `±HH:MM`, `±HHMM`, `±HH:MM:SS`, up to ±15:59:59), an optional ` BC`.
 * Years: four digits (not 0000), or five or six without a leading zero (PostgreSQL goes
 * to 294276 AD, printed as up to 294277 in zones east of UTC). Every range is checked
 * here but the length of the month.
 */
const PATTERN =
  /^((?!0000)\d{4}|[1-9]\d{4,5})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[T ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,6}))?(?:Z|([+-])(0\d|1[0-5])(?::?([0-5]\d)(?::?([0-5]\d))?)?)?( BC)?$/;

/**
 * Parses timestamp text; `undefined` when it is not a valid instant in the accepted
 * formats (see the module comment).
 *
 * @example
 * ```ts
 * parseTimestamp('2024-05-01 10:00:00.123456+00'); // { seconds: 1714557600, micros: 123456 }
 * ```
 */
export function parseTimestamp(text: string): Instant | undefined {
  if (text === 'infinity') return INFINITY;
  if (text === '-infinity') return MINUS_INFINITY;
  const m = PATTERN.exec(text);
  if (m === null) return undefined;
  const [written, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  // 1 BC is year 0 of the proleptic Gregorian calendar (ISO 8601, and PostgreSQL's arithmetic).
  const year = m[12] === undefined ? written : 1 - written;
  if (day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return undefined;
  // No zone (MySQL/MariaDB DATETIME, PostgreSQL timestamp): read as UTC, so the text
  // round-trips unchanged into the same column and orders like the database orders it.
  const offset = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0));
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0'));
  return { seconds: daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset, micros };
}

/**
 * Whether `text` is a timestamp {@link parseTimestamp} accepts: the check a cursor value
 * and a row's timestamp text go through on every page, so it makes nothing it can avoid.
 */
export function isTimestamp(text: string): boolean {
  if (!PATTERN.test(text)) return text === 'infinity' || text === '-infinity';
  // Only days 29 to 31 depend on the month (and the year): the pattern checked the rest.
  const dash = text.indexOf('-', 4);
  return Number(text.slice(dash + 4, dash + 6)) <= 28 || parseTimestamp(text) !== undefined;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`); no `Date`, no two-digit-year quirks. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Sign of `a - b`. */
export function compareInstants(a: Instant, b: Instant): number {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
  return a.micros === b.micros ? 0 : a.micros < b.micros ? -1 : 1;
}

/**
 * ISO 8601 with exactly six fractional digits: `2024-05-01T10:00:00.123000Z`. Years
 * outside 0001–9999 take PostgreSQL's spelling (`10000-01-01T…Z`, `0044-03-15T…Z BC`),
 * which both this parser and PostgreSQL read back, not ISO's `+010000` / `-000043`.
 */
export function dateToTimestamp(date: Date): string {
  const iso = date.toISOString();
  const year = date.getUTCFullYear();
  if (year >= 1 && year <= 9999) return `${iso.slice(0, -1)}000Z`;
  const rest = iso.slice(iso.indexOf('-', 1), -1); // -MM-DDTHH:MM:SS.sss
  return year > 9999 ? `${year}${rest}000Z` : `${String(1 - year).padStart(4, '0')}${rest}000Z BC`;
}
