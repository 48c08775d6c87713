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

// Years: four digits, or five or six without a leading zero (PostgreSQL goes to 294276
// AD, printed as up to 294277 in zones east of UTC). ` BC` as PostgreSQL prints it.
const PATTERN =
  /^(\d{4}|[1-9]\d{4,5})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?)?( BC)?$/;

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

/** Parses timestamp text; `undefined` when it is not a valid instant in the accepted formats. */
export function parseTimestamp(text: string): Instant | undefined {
  if (text === 'infinity') return INFINITY;
  if (text === '-infinity') return MINUS_INFINITY;
  const m = PATTERN.exec(text);
  if (m === null) return undefined;
  const written = Number(m[1]);
  // 1 BC is year 0 of the proleptic Gregorian calendar (ISO 8601, and PostgreSQL's arithmetic).
  const year = m[13] === undefined ? written : 1 - written;
  if (written < 1) return undefined;
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return undefined;
  let offset = 0;
  // No zone (MySQL/MariaDB DATETIME, PostgreSQL timestamp): read as UTC, so the text
  // round-trips unchanged into the same column and orders like the database orders it.
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11] ?? 0);
    const os = Number(m[12] ?? 0);
    if (oh > 15 || om > 59 || os > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60 + os);
  }
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0'));
  return { seconds: daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset, micros };
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
