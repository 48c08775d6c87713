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

/** The ASCII digit at `i` as a number, or -1 (also past the end). */
function digitAt(text: string, i: number): number {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/** Two ASCII digits at `i` as a number, or -1. */
function twoDigitsAt(text: string, i: number): number {
  const a = digitAt(text, i);
  const b = digitAt(text, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

const MICROS_SCALE = [0, 100_000, 10_000, 1000, 100, 10, 1];

// The fields of the text `scan` last accepted (module state: `scan` is synchronous and
// its callers read them at once, so no object is made to carry them).
let scannedYear = 0;
let scannedMonth = 0;
let scannedDay = 0;
let scannedSeconds = 0;
let scannedMicros = 0;
let scannedOffset = 0;

/**
 * Parses timestamp text; `undefined` when it is not a valid instant in the accepted
 * formats: `YYYY-MM-DD`, `T` or a space, `HH:MM:SS`, up to six fractional digits, an
 * optional zone (`Z`, `±HH`, `±HH:MM`, `±HHMM`, `±HH:MM:SS`), an optional ` BC`. Years:
 * four digits, or five or six without a leading zero (PostgreSQL goes to 294276 AD,
 * printed as up to 294277 in zones east of UTC). A scanner rather than a regular
 * expression: this runs for every cursor value on every page, and a 13-group match with
 * its captured substrings cost more than the rest of the check. The tests hold it equal
 * to the regular expression it replaced on random input.
 */
export function parseTimestamp(text: string): Instant | undefined {
  if (text === 'infinity') return INFINITY;
  if (text === '-infinity') return MINUS_INFINITY;
  if (!scan(text)) return undefined;
  return { seconds: daysFromCivil(scannedYear, scannedMonth, scannedDay) * 86_400 + scannedSeconds - scannedOffset, micros: scannedMicros };
}

/**
 * Whether `parseTimestamp(text)` is an instant, without making it: the check a cursor
 * value and a row's timestamp text go through on every page.
 */
export function isTimestamp(text: string): boolean {
  return scan(text) || text === 'infinity' || text === '-infinity';
}

/** Whether `text` is a finite timestamp `parseTimestamp` accepts; if so its fields are in the `scanned…` variables. */
function scan(text: string): boolean {
  const length = text.length;
  // Year: the digits before the first '-': four, or five or six without a leading zero.
  let p = 0;
  let written = 0;
  if (length >= 19 && text.charCodeAt(4) === 45 /* - */) {
    // Four digits, the common case: read at fixed places (a digit d passes when d and 9 - d
    // are both non-negative, so one test covers them all; every place is inside the text).
    const y0 = text.charCodeAt(0) - 48;
    const y1 = text.charCodeAt(1) - 48;
    const y2 = text.charCodeAt(2) - 48;
    const y3 = text.charCodeAt(3) - 48;
    if ((y0 | (9 - y0) | y1 | (9 - y1) | y2 | (9 - y2) | y3 | (9 - y3)) < 0) return false;
    written = y0 * 1000 + y1 * 100 + y2 * 10 + y3;
    p = 4;
  } else {
    for (let d = digitAt(text, 0); d >= 0 && p < 7; d = digitAt(text, ++p)) written = written * 10 + d;
    if (text.charCodeAt(p) !== 45 /* - */ || (p !== 4 && !((p === 5 || p === 6) && text.charCodeAt(0) !== 48))) return false;
  }
  // `-MM-DD HH:MM:SS` after the year: 15 characters, all inside the text or it is no timestamp.
  if (length < p + 15) return false;
  const mo0 = text.charCodeAt(p + 1) - 48;
  const mo1 = text.charCodeAt(p + 2) - 48;
  const d0 = text.charCodeAt(p + 4) - 48;
  const d1 = text.charCodeAt(p + 5) - 48;
  const h0 = text.charCodeAt(p + 7) - 48;
  const h1 = text.charCodeAt(p + 8) - 48;
  const mi0 = text.charCodeAt(p + 10) - 48;
  const mi1 = text.charCodeAt(p + 11) - 48;
  const s0 = text.charCodeAt(p + 13) - 48;
  const s1 = text.charCodeAt(p + 14) - 48;
  const sep = text.charCodeAt(p + 6);
  if (
    (mo0 | (9 - mo0) | mo1 | (9 - mo1) | d0 | (9 - d0) | d1 | (9 - d1) | h0 | (9 - h0) | h1 | (9 - h1) | mi0 | (9 - mi0) | mi1 | (9 - mi1) | s0 | (9 - s0) | s1 | (9 - s1)) < 0 ||
    text.charCodeAt(p + 3) !== 45 ||
    (sep !== 84 /* T */ && sep !== 32) ||
    text.charCodeAt(p + 9) !== 58 /* : */ ||
    text.charCodeAt(p + 12) !== 58
  ) {
    return false;
  }
  const month = mo0 * 10 + mo1;
  const day = d0 * 10 + d1;
  const hour = h0 * 10 + h1;
  const minute = mi0 * 10 + mi1;
  const second = s0 * 10 + s1;
  let i = p + 15;
  let micros = 0;
  if (text.charCodeAt(i) === 46 /* . */) {
    if (i + 7 <= length && sixDigitsAt(text, i + 1)) {
      // All six places (what PostgreSQL and the encoder write), read in one go.
      micros = scannedFraction;
      i += 7;
    } else {
      let n = 0;
      let fraction = 0;
      for (let d = digitAt(text, i + 1); d >= 0 && n < 6; d = digitAt(text, i + 1 + n)) {
        fraction = fraction * 10 + d;
        n++;
      }
      if (n === 0) return false;
      micros = fraction * (MICROS_SCALE[n] as number);
      i += 1 + n;
    }
  }
  // No zone (MySQL/MariaDB DATETIME, PostgreSQL timestamp): read as UTC, so the text
  // round-trips unchanged into the same column and orders like the database orders it.
  let offset = 0;
  const zone = text.charCodeAt(i);
  if (zone === 90 /* Z */) {
    i++;
  } else if (zone === 43 /* + */ || zone === 45 /* - */) {
    const oh = twoDigitsAt(text, i + 1);
    if (oh < 0) return false;
    i += 3;
    let om = 0;
    let os = 0;
    const colon = text.charCodeAt(i) === 58 ? 1 : 0;
    const m = twoDigitsAt(text, i + colon);
    if (m >= 0) {
      om = m;
      i += colon + 2;
      const colon2 = text.charCodeAt(i) === 58 ? 1 : 0;
      const s = twoDigitsAt(text, i + colon2);
      if (s >= 0) {
        os = s;
        i += colon2 + 2;
      }
    }
    if (oh > 15 || om > 59 || os > 59) return false;
    offset = (zone === 45 ? -1 : 1) * (oh * 3600 + om * 60 + os);
  }
  let bc = false;
  if (i + 3 === length && text.charCodeAt(i) === 32 && text.charCodeAt(i + 1) === 66 /* B */ && text.charCodeAt(i + 2) === 67 /* C */) {
    bc = true;
    i += 3;
  }
  if (i !== length) return false;
  // 1 BC is year 0 of the proleptic Gregorian calendar (ISO 8601, and PostgreSQL's arithmetic).
  const year = bc ? 1 - written : written;
  if (written < 1) return false;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  if (day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return false;
  scannedYear = year;
  scannedMonth = month;
  scannedDay = day;
  scannedSeconds = hour * 3600 + minute * 60 + second;
  scannedMicros = micros;
  scannedOffset = offset;
  return true;
}

/** The fraction `sixDigitsAt` last read. */
let scannedFraction = 0;

/** Whether `text[i, i + 6)` (inside the text) is six ASCII digits; if so their value is in `scannedFraction`. */
function sixDigitsAt(text: string, i: number): boolean {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  const c = text.charCodeAt(i + 2) - 48;
  const d = text.charCodeAt(i + 3) - 48;
  const e = text.charCodeAt(i + 4) - 48;
  const f = text.charCodeAt(i + 5) - 48;
  if ((a | (9 - a) | b | (9 - b) | c | (9 - c) | d | (9 - d) | e | (9 - e) | f | (9 - f)) < 0) return false;
  scannedFraction = a * 100_000 + b * 10_000 + c * 1000 + d * 100 + e * 10 + f;
  return true;
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
