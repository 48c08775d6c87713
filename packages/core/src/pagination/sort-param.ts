/**
 * Client-chosen sort: the `sort` query parameter (`sort=-createdAt`,
 * `sort=amountCents,-id`) turned into a validated total order over the fields an endpoint
 * declares sortable. The unique tie-breaker is appended when the client leaves it out, so
 * every chosen order is total and cursors over it never skip or repeat a row.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { SortDirection, SortKey, SortSpec, SortValueType } from './types.ts';

/** One field a client may sort by with `?sort=`: see `PaginatorOptions.sortable`. */
export interface SortableField {
  /** The name in `?sort=`, and the property on the row. */
  readonly name: string;
  /**
   * SQL column, optionally qualified (`o.amount_cents`).
   * @default name
   */
  readonly column?: string;
  readonly type: SortValueType;
  /**
   * `false` for a NOT NULL column; otherwise where nulls go, whatever the direction.
   * @default false
   */
  readonly nullable?: false | { readonly nulls: 'first' | 'last' };
  /**
   * Whether the field alone identifies a row. A unique non-null field ends the order: any
   * field after it in `?sort=` cannot change it and is dropped.
   * @default false
   */
  readonly unique?: boolean;
  /** For a `timestamp` field: see `SortKey.precision`. @default 'us' */
  readonly precision?: 'ms' | 'us';
}

/** Every name a `SortableField` knows (the paginator's `sortable[i]` too). Internal. */
export const SORTABLE_FIELD_OPTIONS: KnownOptions<SortableField> = { name: true, column: true, type: true, nullable: { nulls: true }, unique: true, precision: true };

/** Reads `?sort=`; `resolve` returns the default sort when the parameter is absent. */
export interface SortParam {
  /** Names a client may use, in declaration order. */
  readonly fields: readonly string[];
  resolve(query: URLSearchParams): SortSpec;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_LENGTH = 512;
/** Distinct `sort` values remembered; a bounded map, so clients cannot grow it. */
const CACHE_SIZE = 256;

/**
 * Validates `fields` against the endpoint's default sort (whose last key is the
 * tie-breaker appended to every client order that lacks a unique field). Throws
 * `ConfigError` for an empty list, a bad name, column or type, a name or column used
 * twice, or a field that reuses the tie-breaker's column under another name.
 * `createPaginator({ sortable })` calls it for you.
 *
 * @example
 * ```ts
 * const byDate = defineSortSpec([
 *   { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
 *   { key: 'id', dir: 'desc', type: 'bigint', unique: true },
 * ]);
 * const param = createSortParam([{ name: 'amountCents', column: 'amount_cents', type: 'int' }], byDate);
 * param.resolve(new URLSearchParams('sort=-amountCents')); // amount_cents DESC, id DESC
 * ```
 */
export function createSortParam(fields: readonly SortableField[], defaultSort: SortSpec): SortParam {
  if (!Array.isArray(fields) || fields.length === 0) throw new ConfigError('sortable must be a non-empty array of { name, type } fields');
  const tieBreaker = defaultSort[defaultSort.length - 1] as SortKey;
  const byName = new Map<string, SortKey>();
  const columns = new Set<string>();
  fields.forEach((field, i) => {
    const where = `sortable[${i}]`;
    if (typeof field !== 'object' || field === null) throw new ConfigError(`${where} must be an object`);
    assertKnownOptions('createSortParam', field, SORTABLE_FIELD_OPTIONS, where);
    const { name, column = name, type, nullable = false, unique = false, precision } = field;
    if (typeof name !== 'string' || !NAME.test(name)) throw new ConfigError(`${where}.name must match [A-Za-z_][A-Za-z0-9_]* (it is written in ?sort=)`);
    if (byName.has(name)) throw new ConfigError(`sortable field ${JSON.stringify(name)} appears twice`);
    if (columns.has(column)) throw new ConfigError(`sortable column ${JSON.stringify(column)} appears twice`);
    const key: SortKey = { key: name, column, dir: 'asc', type, nullable, unique, ...(precision === undefined ? {} : { precision }) };
    const ends = unique === true && nullable === false;
    if (!ends && (name === tieBreaker.key || column === tieBreaker.column)) {
      throw new ConfigError(
        `${where} (${name}) uses the tie-breaker's ${name === tieBreaker.key ? 'name' : 'column'} but is not declared unique and non-null like it`,
      );
    }
    // Validates name, column, type and nullability the way every chosen spec will be.
    const [checked] = defineSortSpec(ends ? [key] : [key, tieBreaker]);
    byName.set(name, checked as SortKey);
    columns.add(column);
  });
  const names = Object.freeze([...byName.keys()]);
  const cache = new Map<string, SortSpec>();

  function refuse(detail: string): never {
    throw new KeysetError('invalid_sort', {
      detail: `${detail}. \`sort\` lists fields among ${names.join(', ')}, comma-separated, each at most once, '-' before a field for descending (e.g. sort=-${names[0]}).`,
      extensions: { parameter: 'sort', sortable: names },
    });
  }

  function parse(raw: string): SortSpec {
    if (raw === '') refuse('`sort` must not be empty');
    if (raw.length > MAX_LENGTH) refuse(`\`sort\` is longer than ${MAX_LENGTH} characters`);
    const keys: SortKey[] = [];
    const seen = new Set<string>();
    let ended = false;
    let lastDir: SortDirection = 'asc';
    for (const term of raw.split(',')) {
      const dir: SortDirection = term.startsWith('-') ? 'desc' : 'asc';
      const name = dir === 'desc' ? term.slice(1) : term;
      if (!NAME.test(name)) refuse('`sort` has a malformed field');
      const field = byName.get(name);
      // Not quoted: a field name the endpoint does not know is client text (see redact-echo.ts).
      if (field === undefined) refuse('`sort` has an unknown field');
      if (seen.has(name)) refuse(`\`sort\` names ${JSON.stringify(name)} twice`);
      seen.add(name);
      if (ended) continue;
      keys.push({ ...field, dir });
      lastDir = dir;
      ended = field.unique === true && field.nullable === false;
    }
    // The tie-breaker follows the last field's direction, so `sort=-amountCents` reads
    // `amount DESC, id DESC` and one index on (amount, id) serves both directions.
    if (!ended) keys.push({ ...tieBreaker, dir: lastDir });
    return defineSortSpec(keys);
  }

  return Object.freeze({
    fields: names,
    resolve(query: URLSearchParams): SortSpec {
      const values = query.getAll('sort');
      if (values.length === 0) return defaultSort;
      if (values.length > 1) refuse(`\`sort\` must appear at most once, got ${values.length} values`);
      const raw = values[0] as string;
      const hit = cache.get(raw);
      if (hit !== undefined) return hit;
      const spec = parse(raw);
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(raw, spec);
      return spec;
    },
  });
}
