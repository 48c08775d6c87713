/**
 * Sort values in their three forms: as rows hold them (`Date`, `bigint`, database text),
 * as cursors carry them (`SortValue`: JSON-safe and lossless), and as the comparator
 * orders them (exact: `bigint` for integers and microsecond instants, decimal text).
 * A row's position, the cursor form of its sort values (`rowPosition`), is read from the
 * exact values a query helper attached to it (`SORT_VALUES_FIELD`) where it did, else
 * from the row's own properties.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { SortKey, SortSpec, SortValue, SortValueType } from '../pagination/types.ts';
import { compareDecimal, DECIMAL_PATTERN, INTEGER_PATTERN, numberToDecimal } from './decimal.ts';
import { dateToTimestamp, isTimestamp, parseTimestamp } from './timestamp.ts';

function bad(key: SortKey, raw: unknown): TypeError {
  const shown = typeof raw === 'string' ? JSON.stringify(raw.slice(0, 40)) : raw instanceof Date ? 'an invalid Date' : typeof raw;
  return new TypeError(`sort key ${JSON.stringify(key.key)} (type ${key.type}${key.nullable ? ', nullable' : ''}) cannot hold ${raw === null ? 'null' : shown}`);
}

/**
 * A refusal of a value that may have lost precision on its way from the database: what
 * makes it exact is a setting of the query or the driver, named in the message.
 */
function lossy(key: SortKey, got: string, fix: string): ConfigError {
  return new ConfigError(`sort key ${JSON.stringify(key.key)} (type ${key.type}) got ${got}, so the next page could skip rows: read it as text (@keyset/drizzle: ...page.select; SQL: col::text, CAST(col AS CHAR))${fix}`);
}

/**
 * A row's value for `key` in cursor form. Throws `TypeError` (a server-side data bug,
 * not a client error) when the row does not hold a value of the declared type, and
 * `ConfigError` when it holds one that may have lost precision on its way from the
 * database (a `Date` for a microsecond timestamp, a JS number past 2^53 for a bigint, a
 * number for a decimal): the driver or query setting to change is in the message.
 * `exact` marks a value a query helper read losslessly itself (a SQLite REAL as the JS
 * number that holds it exactly), which is taken as it is.
 */
export function toSortValue(key: SortKey, raw: unknown, exact = false): SortValue {
  if (raw === null || raw === undefined) {
    if (key.nullable) return null;
    throw bad(key, null);
  }
  switch (key.type) {
    case 'string':
      if (typeof raw === 'string') return raw;
      break;
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      break;
    case 'number':
      if (typeof raw === 'number' && Number.isFinite(raw)) return raw === 0 ? 0 : raw;
      break;
    case 'int': {
      const n = typeof raw === 'bigint' ? Number(raw) : typeof raw === 'string' && INTEGER_PATTERN.test(raw) ? Number(raw) : raw;
      if (typeof n === 'number' && Number.isSafeInteger(n) && (typeof raw !== 'bigint' || BigInt(n) === raw)) return n === 0 ? 0 : n;
      break;
    }
    case 'bigint':
      if (typeof raw === 'bigint') return raw.toString();
      if (typeof raw === 'number' && Number.isSafeInteger(raw)) return String(raw === 0 ? 0 : raw);
      if (typeof raw === 'string' && INTEGER_PATTERN.test(raw) && raw !== '-0') return raw;
      if (typeof raw === 'number' && Number.isInteger(raw)) {
        throw lossy(key, `the JS number ${raw}, rounded past 2^53`, ', or set mysql2 bigNumberStrings: true, better-sqlite3 safeIntegers');
      }
      break;
    case 'decimal':
      if (typeof raw === 'bigint') return raw.toString();
      if (typeof raw === 'string' && DECIMAL_PATTERN.test(raw)) return raw;
      if (typeof raw === 'number' && Number.isFinite(raw)) {
        if (exact) return numberToDecimal(raw);
        throw lossy(key, `the JS number ${raw} (16 significant digits)`, ", or declare type: 'number'");
      }
      break;
    case 'timestamp':
      if (raw instanceof Date) {
        if (Number.isNaN(raw.getTime())) break;
        if (key.precision === 'ms') return dateToTimestamp(raw);
        throw lossy(key, 'a JS Date (milliseconds)', ", or set isoTimestamp as pg/PGlite timestamptz parser, mysql2 dateStrings: true, Drizzle mode: 'string', or declare precision: 'ms'");
      } else if (typeof raw === 'string' && isTimestamp(raw)) {
        return raw;
      }
      break;
  }
  throw bad(key, raw);
}

/** Whether `value`, read from a cursor, is a valid cursor-form value for `key`. */
export function isSortValue(key: SortKey, value: unknown): value is SortValue {
  if (value === null) return key.nullable !== false && key.nullable !== undefined;
  switch (key.type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'bigint':
      return typeof value === 'string' && value.length <= 400 && INTEGER_PATTERN.test(value) && value !== '-0';
    case 'decimal':
      return typeof value === 'string' && value.length <= 400 && DECIMAL_PATTERN.test(value);
    case 'timestamp':
      return typeof value === 'string' && isTimestamp(value);
  }
}

const INFINITE_MICROS = 2n ** 64n;

/** A cursor-form value turned into something `compareComparable` orders exactly. */
export type Comparable = string | number | boolean | bigint | null;

export function toComparable(type: SortValueType, value: SortValue): Comparable {
  if (value === null) return null;
  if (type === 'bigint') return BigInt(value as string);
  if (type === 'timestamp') {
    const instant = parseTimestamp(value as string);
    if (instant === undefined) throw new TypeError(`not a timestamp: ${JSON.stringify(value)}`);
    // ±infinity: beyond every finite instant (|µs| < 2^63 for PostgreSQL's whole range).
    if (!Number.isFinite(instant.seconds)) return instant.seconds > 0 ? INFINITE_MICROS : -INFINITE_MICROS;
    return BigInt(instant.seconds) * 1_000_000n + BigInt(instant.micros);
  }
  return value;
}

/**
 * Sign of `a - b` by code point, which is UTF-8 byte order: the order of PostgreSQL's
 * `COLLATE "C"` and SQLite's default `BINARY` collation. JS `<` compares UTF-16 code
 * units instead, which puts U+10000 and above (emoji) before U+E000–U+FFFF (e.g.
 * full-width forms), so a walk mixing the two orders would skip or repeat rows.
 */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Only the first differing unit matters. Surrogates (D800–DFFF) encode code points
    // past FFFF, so lift them above E000–FFFF (the ICU "code point order" fix-up).
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000;
      y += y >= 0xe000 ? -0x800 : 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/** Sign of `a - b` for two non-null comparables of one type. */
export function compareComparable(type: SortValueType, a: Comparable, b: Comparable): number {
  if (type === 'decimal') return compareDecimal(a as string, b as string);
  if (type === 'string') return compareCodePoints(a as string, b as string);
  return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
}

/** Sign of "a comes before b" for one key: direction and null placement applied. */
export function compareKey(key: SortKey, a: Comparable, b: Comparable): number {
  if (a === null || b === null) {
    if (a === b) return 0;
    const nullsFirst = key.nullable !== false && key.nullable !== undefined && key.nullable.nulls === 'first';
    return (a === null) === nullsFirst ? -1 : 1;
  }
  const c = compareComparable(key.type, a, b);
  return key.dir === 'asc' ? c : -c;
}

/** What a cursor-form value of each type looks like, for error messages. */
const CURSOR_FORM: Readonly<Record<SortValueType, string>> = {
  string: 'a string',
  boolean: 'a boolean',
  number: 'a finite number',
  int: 'a safe-integer number (e.g. 42)',
  bigint: 'an integer as decimal text (e.g. "9007199254740993")',
  decimal: 'decimal text (e.g. "12.50")',
  timestamp: 'timestamp text (e.g. "2024-05-01 10:00:00.123456+00")',
};

/** `value` described for a message: its type and a short excerpt. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (typeof value === 'bigint') return `bigint ${value}n`;
  if (value instanceof Date) return 'a Date';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Why `position` is not a cursor position for `sort`: names the key, the expected
 * cursor form and what it got; `undefined` when it fits.
 */
export function positionMismatch(sort: readonly SortKey[], position: readonly unknown[]): string | undefined {
  if (position.length !== sort.length) {
    const keys = sort.map((k) => JSON.stringify(k.key)).join(', ');
    return `cursor position has ${position.length} value${position.length === 1 ? '' : 's'}; the sort spec has ${sort.length} key${sort.length === 1 ? '' : 's'} (${keys}), one value per key`;
  }
  for (let i = 0; i < sort.length; i++) {
    const key = sort[i] as SortKey;
    if (isSortValue(key, position[i])) continue;
    const expected = `${CURSOR_FORM[key.type]}${key.nullable ? ' or null' : ''}`;
    return `cursor position[${i}], sort key ${JSON.stringify(key.key)} (type ${key.type}), must be ${expected}; got ${describeValue(position[i])}`;
  }
  return undefined;
}

/**
 * Name of the row property through which a query helper hands the paginator a row's sort
 * values (an object of cursor values by sort key: `{ createdAt: '2025-…', id: '9007…' }`)
 * as it read them itself, losslessly (timestamps, bigints and decimals as database text),
 * whatever the driver makes of the columns the user selected. `@keyset/kysely` sets it
 * (non-enumerable: the user's row keeps its shape); a `@keyset/drizzle` select carries it
 * as a nested object (`...page.select`). `Paginator.page` reads cursors from it and leaves
 * it out of the items it returns.
 */
export const SORT_VALUES_FIELD = 'keysetSortValues';

/** The row's exact sort values, when a query helper attached them. */
export function exactSortValues(row: object): Readonly<Record<string, unknown>> | undefined {
  if (!Object.hasOwn(row, SORT_VALUES_FIELD)) return undefined;
  const values = (row as Record<string, unknown>)[SORT_VALUES_FIELD];
  return typeof values === 'object' && values !== null ? (values as Record<string, unknown>) : undefined;
}

/**
 * `items` without the enumerable sort-values property (a Drizzle select's): each such
 * item shallow-copied without it, so a response body shows only the user's fields.
 */
export function withoutSortValues<Row>(items: Row[]): Row[] {
  const first = items[0];
  if (typeof first !== 'object' || first === null || !Object.prototype.propertyIsEnumerable.call(first, SORT_VALUES_FIELD)) return items;
  return items.map((item) => {
    const { [SORT_VALUES_FIELD]: _, ...rest } = item as Record<string, unknown>;
    return rest as Row;
  });
}

/**
 * The cursor-form values of `row` for `spec`, checked by `toSortValue`: from the exact
 * values a query helper attached (`exactSortValues`) where it did, else from the row's
 * own properties. The first two keys are read at load sites of their own: a site that
 * only ever sees one property name (an endpoint's first sort key, say `createdAt`) stays
 * a fast named load, where one shared site seeing every key's name turns into V8's
 * megamorphic keyed load.
 */
export function rowPosition(row: Record<string, unknown>, spec: SortSpec): SortValue[] {
  const exact = exactSortValues(row);
  if (exact !== undefined) return spec.map((key) => (Object.hasOwn(exact, key.key) ? toSortValue(key, exact[key.key], true) : toSortValue(key, row[key.key])));
  const length = spec.length;
  const position: SortValue[] = new Array(length);
  const first = spec[0] as SortKey;
  position[0] = toSortValue(first, row[first.key]);
  if (length > 1) {
    const second = spec[1] as SortKey;
    position[1] = toSortValue(second, row[second.key]);
  }
  for (let i = 2; i < length; i++) {
    const key = spec[i] as SortKey;
    position[i] = toSortValue(key, row[key.key]);
  }
  return position;
}
