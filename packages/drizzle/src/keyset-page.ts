/**
 * One page for a Drizzle select: the keyset condition and ORDER BY of a `PagePlan`,
 * written by `@keyset/core`'s `keysetWhere` (the single place that decides the SQL:
 * row values or the OR-expansion with its leading range bound, NULL placement, exact
 * casts), as Drizzle `SQL` with bound parameters for `.where()` and `.orderBy()`.
 *
 * Given the database and the page's filters, an offset page past the first row is a
 * deferred join: `where` keeps the rows whose unique key is among the keys a subquery
 * reads with `ORDER BY … LIMIT … OFFSET …`, and the query's OFFSET becomes 0. The
 * subquery selects the key alone, so the skipped rows come from the sort index (an
 * index-only scan on PostgreSQL, the secondary index holding the primary key on
 * MySQL/MariaDB) instead of being fetched one by one (`pnpm bench db-depth`). SQLite keeps
 * the plain OFFSET (with the filters ANDed into `where`): it already skips those rows in
 * the index without reading the table, and its planner would scan the outer table in
 * index order and probe the key list for every row of it.
 * @module
 */
import { ConfigError, keysetWhere, type PagePlan, type SortSpec, type SqlDialect } from '@keyset/core';
import { assertKnownOptions, exactSortColumns, SORT_VALUES_FIELD, type KnownOptions } from '@keyset/core/adapter';
import { and, getTableColumns, getTableName, inArray, is, sql, Table, type SQL } from 'drizzle-orm';
import { MySqlTable } from 'drizzle-orm/mysql-core';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';

/** The clauses of one page: spread them into the query. */
export interface KeysetClauses {
  /**
   * The keyset condition, ANDed with `options.where`; in offset mode past the first row
   * with `options`, the deferred join's condition. `undefined` when there is nothing to
   * check (`and()` skips it).
   */
  where: SQL | undefined;
  /** The ORDER BY list, for `.orderBy(...clauses.orderBy)`. */
  orderBy: SQL[];
  /** `plan.take`: one row more than the page, for has-more. */
  limit: number;
  /** `plan.offset` in offset mode (0 when the deferred join does the skipping), else 0. */
  offset: number;
  /**
   * The sort values as the database writes them, for the query's selection:
   * `db.select({ ...fields, ...page.select })`. `Paginator.page` makes the next cursor
   * from them, exact whatever the columns' modes and the driver's settings, and leaves
   * them out of the items.
   */
  select: { keysetSortValues: Record<string, SQL.Aliased> };
}

/**
 * What the deferred join needs from a Drizzle database: `select(fields).from(table)`, as
 * pg-core, mysql-core and sqlite-core databases (and transactions) all have it.
 */
export interface SelectingDatabase {
  select(fields: Record<string, never>): unknown;
}

/** Options of {@link keysetPage}. */
export interface KeysetPageOptions {
  /** The database (or transaction) the page query runs on: it builds the offset subquery. */
  db: SelectingDatabase;
  /**
   * The page's filters, over the columns the query sees. They are ANDed into `where`, and
   * into the offset subquery, which must count the same rows as the page.
   * @default no filters
   */
  where?: SQL | undefined;
}

/** Every name `KeysetPageOptions` knows, checked on each call (a misspelt `where` would drop the filters from the subquery). */
const KEYSET_PAGE_OPTIONS = { db: true, where: true } as const satisfies KnownOptions<KeysetPageOptions>;

/** The chain the offset subquery is built with (each core's builder has it). */
interface SubqueryBuilder {
  from(source: unknown): SubqueryBuilder;
  where(condition: SQL | undefined): SubqueryBuilder;
  orderBy(...columns: SQL[]): SubqueryBuilder;
  limit(limit: number): SubqueryBuilder;
  offset(offset: number): SubqueryBuilder;
  as(alias: string): Record<string, SQL.Aliased>;
}

/** The deferred join's subquery and its one column: names no user table or column is likely to take. */
const PAGE = 'keyset_page';
const KEYS = 'keyset_keys';
const PAGE_KEY = 'keyset_key';

const PLACEHOLDER: Record<SqlDialect, RegExp> = { postgres: /\$(\d+)/g, sqlite: /\?/g, mysql: /\?/g };
const ALWAYS = new Set(['TRUE', '1=1']);

function dialectOf(table: Table): SqlDialect {
  if (is(table, PgTable)) return 'postgres';
  if (is(table, MySqlTable)) return 'mysql';
  if (is(table, SQLiteTable)) return 'sqlite';
  throw new ConfigError('keysetPage: table must be a drizzle-orm pg-core, mysql-core or sqlite-core table');
}

/**
 * Sort columns that name this table (unqualified, or qualified with its name or alias)
 * must be its columns: a typo fails here, not as a database error on the second page.
 */
function checkColumns(table: Table, sort: SortSpec): void {
  const names = new Set(Object.values(getTableColumns(table)).map((c) => c.name));
  const own = getTableName(table);
  for (const k of sort) {
    const parts = (k.column ?? k.key).split('.');
    const column = parts[parts.length - 1]!;
    const qualifier = parts.length > 1 ? parts[parts.length - 2] : own;
    if (qualifier === own && !names.has(column)) {
      throw new ConfigError(`sort key ${JSON.stringify(k.key)}: table ${own} has no column ${JSON.stringify(column)}; set \`column\` to its SQL name`);
    }
  }
}

/**
 * `KeysetClauses.select` for `sort`. Aliased: PostgreSQL names `CAST(created_at AS text)`
 * "created_at", which would make `ORDER BY created_at` ambiguous beside the caller's own
 * column.
 */
function exactSelection(sort: SortSpec, dialect: SqlDialect): KeysetClauses['select'] {
  const values: Record<string, SQL.Aliased> = {};
  for (const c of exactSortColumns(sort, dialect)) values[c.key] = sql.raw(c.sql).as(c.alias);
  return { [SORT_VALUES_FIELD]: values } as KeysetClauses['select'];
}

/** `keysetWhere`'s text and parameters as Drizzle SQL with bound values. */
function dialectCondition(text: string, params: readonly unknown[], dialect: SqlDialect): SQL {
  const parts: SQL[] = [];
  let last = 0;
  let next = 0;
  for (const m of text.matchAll(PLACEHOLDER[dialect])) {
    parts.push(sql.raw(text.slice(last, m.index)));
    // PostgreSQL numbers its placeholders (a value used twice is one `$n`); `?` is positional.
    parts.push(sql`${m[1] === undefined ? params[next++] : params[Number(m[1]) - 1]}`);
    last = m.index + m[0].length;
  }
  parts.push(sql.raw(text.slice(last)));
  return sql`(${sql.join(parts)})`;
}

/**
 * The rows of an offset page past the first row, as a condition: the unique key is among
 * the `limit` keys at `offset` of the filtered rows in page order. The keys sit in two
 * derived tables: MySQL and MariaDB accept no LIMIT directly inside `IN`, and they
 * estimate a derived table with `LIMIT n OFFSET m` at `n + m` rows, which makes them scan
 * the whole outer table and probe the keys; the outer `LIMIT n` brings the estimate to
 * `n`, so they read the keys first and fetch each row by its key.
 */
function deferredOffset(options: KeysetPageOptions, table: Table, unique: string, orderBy: SQL[], limit: number, offset: number): SQL {
  const db = options.db as unknown as { select(fields: Record<string, unknown>): SubqueryBuilder };
  const column = sql.join(unique.split('.').map((part) => sql.identifier(part)), sql.raw('.'));
  const keys = db
    .select({ [PAGE_KEY]: sql`${column}`.as(PAGE_KEY) })
    .from(table)
    .where(options.where)
    .orderBy(...orderBy)
    .limit(limit)
    .offset(offset)
    .as(KEYS);
  const page = db.select({ [PAGE_KEY]: keys[PAGE_KEY]! }).from(keys).limit(limit).as(PAGE);
  return inArray(column, db.select({ [PAGE_KEY]: page[PAGE_KEY]! }).from(page) as unknown as SQL);
}

/**
 * The clauses of the page `plan` describes, for a query over `table` (a pg-core,
 * mysql-core or sqlite-core table, or an `alias()` of one; it picks the SQL dialect):
 * the rows strictly after the cursor in `sort` order, `plan.take` of them (one more than
 * the page, for has-more), from `plan.offset` in offset mode. `sort` is `plan.sort`. A
 * backward page (`prevCursor`) comes back in fetch order: pass the rows to
 * `Paginator.page` as they are, it restores sort order. Spread `select` into the
 * query's selection: the next cursor is read from it (see the module comment).
 *
 * With `options` (`{ db, where: filters }`), `where` includes the filters, and an offset
 * page past the first row is a deferred join (see above) with `offset` 0: pass the
 * query's every filter in `where`, and use the returned `where` alone. Without them,
 * offset pages use a plain OFFSET, which reads every row it skips.
 *
 * Sort columns are SQL names as the query sees them: `created_at`, or `o.created_at`
 * when the query joins or aliases. Throws `ConfigError` for a bad spec or a column the
 * table does not have, `TypeError` for a plan that does not fit the spec.
 *
 * @example
 * ```ts
 * const page = keysetPage(orders, plan, plan.sort, { db, where: eq(orders.status, 'paid') });
 * const rows = await db.select({ ...getTableColumns(orders), ...page.select }).from(orders)
 *   .where(page.where)
 *   .orderBy(...page.orderBy).limit(page.limit).offset(page.offset);
 * ```
 */
export function keysetPage(table: Table, plan: PagePlan, sort: SortSpec, options?: KeysetPageOptions): KeysetClauses {
  const dialect = dialectOf(table);
  checkColumns(table, sort);
  if (options !== undefined) {
    assertKnownOptions('keysetPage', options, KEYSET_PAGE_OPTIONS);
    if (typeof (options.db as { select?: unknown } | undefined)?.select !== 'function') {
      throw new ConfigError('keysetPage: options.db must be the Drizzle database (or transaction) the page query runs on');
    }
  }
  const k = keysetWhere(plan, sort, dialect);
  // Items are `col DIR[ NULLS …]` or MySQL's `col IS NULL DIR`: identifiers never hold ", ".
  const orderBy = k.orderBy.split(', ').map((item) => sql.raw(item));
  const filters = options?.where;
  // SQLite keeps the plain OFFSET: see the module comment.
  if (options !== undefined && k.offset > 0 && dialect !== 'sqlite') {
    const last = sort[sort.length - 1]!;
    const page = deferredOffset(options, table, last.column ?? last.key, orderBy, k.limit, k.offset);
    return { where: and(filters, page), orderBy, limit: k.limit, offset: 0, select: exactSelection(sort, dialect) };
  }
  const condition = ALWAYS.has(k.where) ? undefined : dialectCondition(k.where, k.params, dialect);
  return { where: filters === undefined ? condition : and(filters, condition), orderBy, limit: k.limit, offset: k.offset, select: exactSelection(sort, dialect) };
}
