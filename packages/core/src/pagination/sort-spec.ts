/**
 * Sort specs: a list of keys that must form a total order, checked once when the spec
 * is defined. A walk over a non-total order skips or repeats rows that tie on every
 * key, so the last key must be unique and non-null.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { PagePlan, SortKey, SortSpec, SortValueType } from './types.ts';

const TYPES: ReadonlySet<SortValueType> = new Set(['string', 'int', 'bigint', 'decimal', 'number', 'timestamp', 'boolean']);
const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/**
 * Set by `defineSortSpec` only, as a non-enumerable property of the frozen spec: the spec
 * in the other direction. Its presence marks a validated spec (no module registry: the
 * spec carries it).
 */
const REVERSE = Symbol('keyset.sortSpec.reverse');

/** A spec `defineSortSpec` made: validated, frozen, carrying its reverse. */
type DefinedSortSpec = SortSpec & { readonly [REVERSE]: SortSpec };

function isDefined(sort: unknown): sort is DefinedSortSpec {
  return typeof sort === 'object' && sort !== null && Object.hasOwn(sort, REVERSE);
}

/** Every name a `SortKey` knows (the paginator's `sort[i]` too). Internal. */
export const SORT_KEY_OPTIONS: KnownOptions<SortKey> = { key: true, column: true, dir: true, type: true, nullable: { nulls: true }, unique: true, precision: true };

function checkKey(input: SortKey, index: number, last: boolean): SortKey {
  const where = `sort[${index}]`;
  if (typeof input !== 'object' || input === null) throw new ConfigError(`${where} must be an object`);
  const { key, column, dir, type, nullable = false, unique = false, precision } = input;
  if (typeof key !== 'string' || key === '') throw new ConfigError(`${where}.key must be a non-empty string`);
  const col = column ?? key;
  if (typeof col !== 'string' || !COLUMN.test(col)) {
    throw new ConfigError(
      `${where}: column ${JSON.stringify(col)} must match [A-Za-z_][A-Za-z0-9_]* (dotted parts allowed); set \`column\` when the key is not a plain identifier`,
    );
  }
  if (dir !== 'asc' && dir !== 'desc') throw new ConfigError(`${where}.dir must be 'asc' or 'desc'`);
  if (!TYPES.has(type)) throw new ConfigError(`${where}.type must be one of ${[...TYPES].join(', ')}`);
  if (nullable !== false && (typeof nullable !== 'object' || nullable === null || (nullable.nulls !== 'first' && nullable.nulls !== 'last'))) {
    throw new ConfigError(`${where}.nullable must be false or { nulls: 'first' | 'last' }`);
  }
  if (typeof unique !== 'boolean') throw new ConfigError(`${where}.unique must be a boolean`);
  if (precision !== undefined && (type !== 'timestamp' || (precision !== 'ms' && precision !== 'us'))) throw new ConfigError(`${where}.precision: 'ms' or 'us', on a timestamp key only`);
  if (last && (!unique || nullable !== false)) {
    throw new ConfigError(
      `${where} (${key}): the last sort key must be declared unique: true and non-null, or rows that tie on every key can be skipped or repeated; add a unique tie-breaker such as { key: 'id', dir: 'asc', type: 'bigint', unique: true }`,
    );
  }
  const out: SortKey = {
    key,
    column: col,
    dir,
    type,
    nullable: nullable === false ? false : Object.freeze({ nulls: nullable.nulls }),
    unique,
    ...(precision === undefined ? {} : { precision }),
  };
  return Object.freeze(out);
}

/**
 * Validates a sort spec and returns a frozen copy with defaults filled in
 * (`column`, `nullable: false`, `unique: false`). Throws `ConfigError` for an empty
 * spec, duplicate keys or columns, an unknown type or direction, a column that is not
 * a plain identifier, or a last key that is not unique and non-null.
 *
 * @example
 * ```ts
 * const sort = defineSortSpec([
 *   { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
 *   { key: 'id', dir: 'desc', type: 'bigint', unique: true },
 * ]);
 * ```
 */
export function defineSortSpec(keys: readonly SortKey[]): SortSpec {
  if (isDefined(keys)) return keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new ConfigError('sort must be a non-empty array of sort keys');
  keys.forEach((key, i) => assertKnownOptions('defineSortSpec', key, SORT_KEY_OPTIONS, `sort[${i}]`));
  const spec = keys.map((k, i) => checkKey(k, i, i === keys.length - 1));
  const seenKeys = new Set<string>();
  const seenColumns = new Set<string>();
  for (const k of spec) {
    if (seenKeys.has(k.key)) throw new ConfigError(`sort key ${JSON.stringify(k.key)} appears twice`);
    if (seenColumns.has(k.column as string)) throw new ConfigError(`sort column ${JSON.stringify(k.column)} appears twice`);
    seenKeys.add(k.key);
    seenColumns.add(k.column as string);
  }
  // Both directions made now, each the other's reverse: a backward page costs no spec.
  const back = spec.map(flipped);
  Object.defineProperty(spec, REVERSE, { value: back });
  Object.defineProperty(back, REVERSE, { value: spec });
  Object.freeze(back);
  return Object.freeze(spec);
}

/** `key` walked the other way: direction and null placement flipped. */
function flipped(key: SortKey): SortKey {
  return Object.freeze({
    ...key,
    dir: key.dir === 'asc' ? ('desc' as const) : ('asc' as const),
    nullable: key.nullable ? Object.freeze({ nulls: key.nullable.nulls === 'first' ? ('last' as const) : ('first' as const) }) : false,
  });
}

/** `sort` itself when already validated, else its validated copy (ConfigError when bad). */
export function assertSortSpec(sort: SortSpec): SortSpec {
  return isDefined(sort) ? sort : defineSortSpec(sort);
}

/**
 * The walk in the other direction: every key's direction and null placement flipped
 * (`created_at DESC, id DESC` → `created_at ASC, id ASC`; nulls first → nulls last).
 * Validated and frozen; the same object for the same spec, and reversing it twice gives
 * the original back.
 *
 * @example
 * ```ts
 * const back = reverseSortSpec(defineSortSpec([{ key: 'id', dir: 'desc', type: 'bigint', unique: true }]));
 * // → [{ key: 'id', column: 'id', dir: 'asc', type: 'bigint', nullable: false, unique: true }]
 * ```
 */
export function reverseSortSpec(sort: SortSpec): SortSpec {
  return (assertSortSpec(sort) as DefinedSortSpec)[REVERSE];
}

/**
 * The order a source fetches `plan`'s rows in: `sort` for offset and forward cursor pages,
 * `reverseSortSpec(sort)` for backward ones (see `PagePlan`).
 *
 * @example
 * ```ts
 * const order = fetchSort(plan, plan.sort); // sort your rows by this, take plan.take after plan.after
 * ```
 */
export function fetchSort(plan: PagePlan, sort: SortSpec): SortSpec {
  return plan.mode === 'cursor' && plan.direction === 'backward' ? reverseSortSpec(sort) : assertSortSpec(sort);
}

function sameKey(a: SortKey, b: SortKey): boolean {
  const nullsA = a.nullable ? a.nullable.nulls : false;
  const nullsB = b.nullable ? b.nullable.nulls : false;
  return (
    a.key === b.key &&
    (a.column ?? a.key) === (b.column ?? b.key) &&
    a.dir === b.dir &&
    a.type === b.type &&
    nullsA === nullsB &&
    (a.unique === true) === (b.unique === true) &&
    (a.precision ?? 'us') === (b.precision ?? 'us')
  );
}

/**
 * `sort`, validated, after checking that it is the sort `plan` was made for: a source
 * handed the endpoint's default sort for a page the client sorted otherwise would return
 * rows in the wrong order under a valid cursor. Throws `TypeError` (a server bug).
 */
export function planSortSpec(plan: PagePlan, sort: SortSpec): SortSpec {
  const spec = assertSortSpec(sort);
  const own = (plan as { sort?: SortSpec }).sort;
  if (own === undefined || own === spec || own === sort) return spec;
  if (own.length !== spec.length || own.some((k, i) => !sameKey(k, spec[i] as SortKey))) {
    throw new TypeError('the sort passed does not match plan.sort (the page may be client-sorted): pass plan.sort');
  }
  return spec;
}
