/**
 * SQL source: the WHERE / ORDER BY / LIMIT / OFFSET of one page, for PostgreSQL, SQLite
 * and MySQL/MariaDB. Values always travel as parameters; identifiers come from the
 * validated sort spec and are quoted.
 *
 * "Strictly after the cursor" is written so a B-tree index on the sort columns serves it:
 * - all keys NOT NULL and one direction: a row-value comparison,
 *   `("created_at", "id") < ($1::timestamptz, $2::bigint)`, which PostgreSQL turns into
 *   a single index range (an Index Cond);
 * - mixed directions or nullable keys: the nested OR-expansion, ANDed with a range bound
 *   on the leading key (`"created_at" <= $1 AND ("created_at" < $1 OR ("created_at" = $1
 *   AND "id" > $2))`), so the leading column still bounds the index scan.
 * Nullable keys follow the spec's `nulls` placement in the predicate and in ORDER BY.
 *
 * MySQL/MariaDB (`'mysql'`): their range optimizer does not turn a row-value `<` into an
 * index range, so every multi-key cursor takes the OR-expansion with its leading bound.
 * They have no `NULLS FIRST/LAST` and sort NULL lowest (first ascending, last descending):
 * a key whose placement agrees is a plain `col ASC|DESC` (index-friendly); otherwise the
 * key is preceded by `col IS NULL ASC|DESC`, which no index can serve. Values are cast
 * so comparisons stay exact and sargable: integers and decimals as DECIMAL (a string
 * compared with a number column would be compared as a double, losing digits past 2^53),
 * timestamps as UTC `DATETIME(6)` literals.
 *
 * A backward page (`plan.direction === 'backward'`) is the same query over the reversed
 * spec: comparisons and ORDER BY flip, PostgreSQL scans the same index backwards, and
 * `Paginator.page` flips the fetched rows back into sort order.
 * @module
 */
import { toMysqlDatetime } from '../internal/mysql-datetime.ts';
import { isSortValue } from '../internal/sort-values.ts';
import { assertSortSpec, fetchSort, planSortSpec } from './sort-spec.ts';
import type { PagePlan, SortKey, SortSpec, SortValue, SortValueType } from './types.ts';

/** SQL dialects `keysetWhere` writes. */
export type SqlDialect = 'postgres' | 'sqlite' | 'mysql';

/** Options of {@link keysetWhere}. */
export interface KeysetWhereOptions {
  /**
   * Parameters already used by the rest of the statement: PostgreSQL placeholders start
   * at `$(paramOffset + 1)`. Ignored by SQLite and MySQL (`?` is positional: put `params`
   * after yours).
   * @default 0
   */
  paramOffset?: number;
}

/** Fragments of one page's query. `where` is safe to AND with other conditions. */
export interface KeysetQuery {
  where: string;
  /** The ORDER BY list, without the keywords. */
  orderBy: string;
  /** `plan.take`: one row more than the page, for has-more. */
  limit: number;
  offset: number;
  params: unknown[];
}

const CASTS: Partial<Record<SortValueType, string>> = { timestamp: '::timestamptz', bigint: '::bigint', decimal: '::numeric' };
const MYSQL_CASTS: Partial<Record<SortValueType, string>> = { timestamp: 'DATETIME(6)', bigint: 'DECIMAL(65,0)', decimal: 'DECIMAL(65,30)' };

function quote(column: string, dialect: SqlDialect): string {
  const q = dialect === 'mysql' ? '`' : '"';
  return column
    .split('.')
    .map((part) => `${q}${part}${q}`)
    .join('.');
}

/** One ORDER BY item. MySQL sorts NULL lowest and has no NULLS FIRST/LAST. */
function orderItem(key: SortKey, dialect: SqlDialect): string {
  const column = quote(key.column ?? key.key, dialect);
  const dir = key.dir === 'asc' ? 'ASC' : 'DESC';
  const nulls = nullsOf(key);
  if (nulls === undefined) return `${column} ${dir}`;
  if (dialect !== 'mysql') return `${column} ${dir} NULLS ${nulls === 'first' ? 'FIRST' : 'LAST'}`;
  if ((nulls === 'first') === (key.dir === 'asc')) return `${column} ${dir}`;
  return `${column} IS NULL ${nulls === 'first' ? 'DESC' : 'ASC'}, ${column} ${dir}`;
}

function nullsOf(key: SortKey): 'first' | 'last' | undefined {
  return key.nullable ? key.nullable.nulls : undefined;
}

/** One sort column read without loss: see {@link exactSortColumns}. */
export interface ExactSortColumn {
  /** The sort key the value belongs to: its name in the row's `keysetSortValues`. */
  key: string;
  /** The alias to select it under, `keyset_sort_<i>` (`i` its index in the sort). */
  alias: string;
  /** The expression, without the alias. */
  sql: string;
}

/**
 * The sort columns a driver at its defaults may hand over rounded (`timestamp` as a
 * millisecond `Date`, `bigint` as a JS number past 2^53, `decimal` as a double), each as
 * an expression that reads it as the database writes it: PostgreSQL's and MySQL's text
 * (what a type parser would receive), SQLite's integer and decimal text, a SQLite REAL
 * as the double it holds (its text keeps 15 digits; SQLite timestamps are text already).
 * A query integration selects them beside the caller's columns and hands the values to
 * `Paginator.page` as the row's `keysetSortValues` (`SORT_VALUES_FIELD`), which the next
 * cursor is made from, whatever the driver made of the caller's columns.
 *
 * @example
 * ```ts
 * exactSortColumns(plan.sort, 'postgres');
 * // → [{ key: 'createdAt', alias: 'keyset_sort_0', sql: 'CAST("o"."created_at" AS text)' }, …]
 * ```
 */
export function exactSortColumns(sort: SortSpec, dialect: SqlDialect): ExactSortColumn[] {
  const out: ExactSortColumn[] = [];
  assertSortSpec(sort).forEach((key, i) => {
    if (key.type !== 'timestamp' && key.type !== 'bigint' && key.type !== 'decimal') return;
    const column = quote(key.column ?? key.key, dialect);
    let expression: string;
    if (dialect === 'postgres') expression = `CAST(${column} AS text)`;
    else if (dialect === 'mysql') expression = `CAST(${column} AS CHAR)`;
    else if (key.type === 'timestamp') return;
    else expression = key.type === 'decimal' ? `CASE typeof(${column}) WHEN 'real' THEN ${column} ELSE CAST(${column} AS TEXT) END` : `CAST(${column} AS TEXT)`;
    out.push({ key: key.key, alias: `keyset_sort_${i}`, sql: expression });
  });
  return out;
}

/**
 * Builds the fragments of the page `plan` describes, in fetch order (reversed for a
 * backward page: pass the rows to `Paginator.page` as they come). `sort` is `plan.sort`.
 * Throws `ConfigError` for a bad sort spec and `TypeError` when `plan.after` does not fit
 * it or `sort` is not the plan's sort.
 *
 * @example
 * ```ts
 * const k = keysetWhere(plan, plan.sort, 'postgres', { paramOffset: 1 });
 * const { rows } = await pool.query(
 *   `SELECT id::text AS id, created_at::text AS "createdAt" FROM orders o
 *     WHERE o.status = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit} OFFSET ${k.offset}`,
 *   ['paid', ...k.params],
 * );
 * ```
 */
export function keysetWhere(plan: PagePlan, sort: SortSpec, dialect: SqlDialect, options: KeysetWhereOptions = {}): KeysetQuery {
  const spec = fetchSort(plan, planSortSpec(plan, sort));
  const { paramOffset = 0 } = options;
  if (dialect !== 'postgres' && dialect !== 'sqlite' && dialect !== 'mysql') throw new TypeError(`unknown SQL dialect ${String(dialect)}`);
  if (!Number.isSafeInteger(paramOffset) || paramOffset < 0) throw new TypeError('paramOffset must be a non-negative integer');
  const orderBy = spec.map((k) => orderItem(k, dialect)).join(', ');
  const always = dialect === 'sqlite' ? '1=1' : 'TRUE';
  const never = dialect === 'sqlite' ? '1=0' : 'FALSE';
  const base = { orderBy, limit: plan.take };
  if (plan.mode === 'offset') return { ...base, where: always, offset: plan.offset, params: [] };
  if (plan.after === null) return { ...base, where: always, offset: 0, params: [] };
  const after = plan.after;
  if (after.length !== spec.length || after.some((v, i) => !isSortValue(spec[i]!, v))) {
    throw new TypeError('plan.after does not match the sort spec (one cursor-form value per key)');
  }

  // Placeholders are markers first and numbered in text order at the end: SQLite's `?` is
  // positional, and PostgreSQL reuses one `$n` for every mention of a value.
  const param = (i: number): string => `\u0000${i}\u0000`;
  const col = (i: number): string => quote(spec[i]!.column ?? spec[i]!.key, dialect);
  const value = (i: number): SortValue => after[i] as SortValue;

  const rowValue = dialect !== 'mysql' && spec.length > 1 && spec.every((k) => !k.nullable && k.dir === spec[0]!.dir);
  if (rowValue) {
    const cols = spec.map((_, i) => col(i)).join(', ');
    const vals = spec.map((_, i) => param(i)).join(', ');
    return { ...base, ...render(`(${cols}) ${spec[0]!.dir === 'asc' ? '>' : '<'} (${vals})`, spec, after, dialect, paramOffset), offset: 0 };
  }

  // Rows strictly after the cursor on key i ("gt"), and rows tied with it ("eq").
  const gt = (i: number): string | null => {
    const k = spec[i]!;
    const nulls = nullsOf(k);
    if (value(i) === null) return nulls === 'first' ? `${col(i)} IS NOT NULL` : null;
    const cmp = `${col(i)} ${k.dir === 'asc' ? '>' : '<'} ${param(i)}`;
    return nulls === 'last' ? `(${cmp} OR ${col(i)} IS NULL)` : cmp;
  };
  const eq = (i: number): string => (value(i) === null ? `${col(i)} IS NULL` : `${col(i)} = ${param(i)}`);
  // after(i) = gt(i) OR (eq(i) AND after(i + 1)); the last key is unique, so after(n) = FALSE.
  const afterFrom = (i: number): string | null => {
    const strict = gt(i);
    if (i === spec.length - 1) return strict;
    const rest = afterFrom(i + 1);
    const tie = rest === null ? null : `(${eq(i)} AND ${rest})`;
    if (strict === null) return tie;
    if (tie === null) return strict;
    return `(${strict} OR ${tie})`;
  };
  const predicate = afterFrom(0);
  if (predicate === null) return { ...base, where: never, offset: 0, params: [] };
  // Leading range bound (the rows at or after the cursor on key 0): redundant logically,
  // but a plain comparison the planner can turn into an index range.
  const k0 = spec[0]!;
  let bound: string | null = null;
  // A null cursor value needs none: the predicate already starts with `IS NOT NULL` or `IS NULL`.
  if (value(0) !== null && spec.length > 1) {
    const cmp = `${col(0)} ${k0.dir === 'asc' ? '>=' : '<='} ${param(0)}`;
    bound = nullsOf(k0) === 'last' ? `(${cmp} OR ${col(0)} IS NULL)` : cmp;
  }
  const where = bound === null ? predicate : `(${bound} AND ${predicate})`;
  return { ...base, ...render(where, spec, after, dialect, paramOffset), offset: 0 };
}

function render(
  template: string,
  spec: SortSpec,
  after: readonly SortValue[],
  dialect: SqlDialect,
  paramOffset: number,
): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const numbers = new Map<number, number>();
  const where = template.replace(/\u0000(\d+)\u0000/g, (_, index: string) => {
    const i = Number(index);
    if (dialect === 'mysql') {
      const v = after[i];
      const cast = MYSQL_CASTS[spec[i]!.type];
      params.push(spec[i]!.type === 'timestamp' ? toMysqlDatetime(v as string) : v);
      return cast === undefined ? '?' : `CAST(? AS ${cast})`;
    }
    if (dialect === 'sqlite') {
      // SQLite has no boolean type (it stores 1/0), and drivers such as better-sqlite3
      // and node:sqlite refuse to bind a JS boolean.
      const v = after[i];
      params.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
      return '?';
    }
    let n = numbers.get(i);
    if (n === undefined) {
      params.push(after[i]);
      n = paramOffset + params.length;
      numbers.set(i, n);
    }
    return `$${n}${CASTS[spec[i]!.type] ?? ''}`;
  });
  return { where, params };
}
