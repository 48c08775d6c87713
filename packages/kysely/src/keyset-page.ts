/**
 * One page of a Kysely select: the keyset condition, ORDER BY, LIMIT and OFFSET of a
 * `PagePlan`, written by `@keyset/core`'s `keysetWhere` (the single place that decides
 * the SQL: row values or the OR-expansion with its leading range bound, NULL placement,
 * exact casts) and handed to Kysely as SQL with bound parameters.
 *
 * An offset page past the first row is a deferred join: a subquery selects only the
 * unique last sort key, in page order, with LIMIT and OFFSET, and the query joins its
 * rows back on that key. The skipped rows are then read from the sort index alone (an
 * index-only scan on PostgreSQL, the secondary index holding the primary key on
 * MySQL/MariaDB) instead of being fetched one by one: at depth 990,000 of 1,000,000
 * orders the page costs a fraction of the plain `OFFSET` (`pnpm bench db-depth`).
 * SQLite keeps the plain `OFFSET`: it already skips those rows in the index without
 * reading the table, and its planner drives the join from the outer table in index
 * order, probing the subquery for every row of it.
 *
 * A cursor page also selects, beside the caller's selection, each timestamp, bigint and
 * decimal sort column as database text (core's `exactSortColumns`), and a result plugin moves
 * those values into the row's non-enumerable `keysetSortValues`, where `Paginator.page`
 * reads the next cursor from. The caller's columns stay as the driver makes them (a
 * `Date`, a rounded number): the cursor never depends on them, so no type parser is
 * needed for an exact walk.
 * @module
 */
import { keysetWhere, type KeysetQuery, type PagePlan, type SortKey, type SqlDialect } from '@keyset/core';
import { exactSortColumns, SORT_VALUES_FIELD } from '@keyset/core/adapter';
import { sql, type KyselyPlugin, type RawBuilder, type SelectQueryBuilder, type SqlBool, type StringReference, type UnknownRow } from 'kysely';

type ColumnOf<K> = K extends { readonly column: infer C } ? C : K extends { readonly key: infer N } ? N : never;

/**
 * `S` with each key's column (its `key` when `column` is absent) checked against the
 * tables of the query: a column written as a literal must be one Kysely knows
 * (`'created_at'` or `'o.created_at'`). Specs typed as plain `string` (e.g. a
 * `Paginator`'s `sort`) are checked when they are defined and at run time instead.
 */
export type CheckedSortSpec<DB, TB extends keyof DB, S extends readonly SortKey[]> = {
  readonly [I in keyof S]: string extends ColumnOf<S[I]>
    ? S[I]
    : ColumnOf<S[I]> extends StringReference<DB, TB>
      ? S[I]
      : S[I] & { readonly column: StringReference<DB, TB> };
};

const PLACEHOLDER: Record<SqlDialect, RegExp> = { postgres: /\$(\d+)/g, sqlite: /\?/g, mysql: /\?/g };
const ALWAYS = new Set(['TRUE', '1=1']);
/** The deferred join's subquery and its one column: names no user table or column is likely to take. */
const PAGE = 'keyset_page';
const PAGE_KEY = 'keyset_key';

/**
 * Moves the reserved columns of each result row into its `keysetSortValues` (by sort
 * key), non-enumerable so that the row keeps the shape the caller selected.
 */
function sortValuesPlugin(aliases: ReadonlyMap<string, string>): KyselyPlugin {
  return {
    transformQuery: (args) => args.node,
    async transformResult(args) {
      const rows = args.result.rows.map((row) => {
        const own: UnknownRow = {};
        const values: Record<string, unknown> = {};
        for (const name of Object.keys(row)) {
          const key = aliases.get(name);
          if (key === undefined) own[name] = row[name];
          else values[key] = row[name];
        }
        return Object.defineProperty(own, SORT_VALUES_FIELD, { value: Object.freeze(values), enumerable: false });
      });
      return { ...args.result, rows };
    },
  };
}

/** `query` also selecting the exact sort values of `sort` (see the module comment). */
function withExactSortValues<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, sort: readonly SortKey[], dialect: SqlDialect): SelectQueryBuilder<DB, TB, O> {
  const exact = exactSortColumns(sort, dialect);
  if (exact.length === 0) return query;
  const aliases = new Map(exact.map((c) => [c.alias, c.key]));
  // The plugin strips the added columns again: the selection `O` is unchanged.
  return query.select(exact.map((c) => sql.raw(c.sql).as(c.alias))).withPlugin(sortValuesPlugin(aliases)) as unknown as SelectQueryBuilder<DB, TB, O>;
}

/** `keysetWhere`'s text and parameters as one Kysely expression with bound values. */
function condition(text: string, params: readonly unknown[], dialect: SqlDialect): RawBuilder<SqlBool> {
  const parts: RawBuilder<unknown>[] = [];
  let last = 0;
  let next = 0;
  for (const m of text.matchAll(PLACEHOLDER[dialect])) {
    parts.push(sql.raw(text.slice(last, m.index)));
    // PostgreSQL numbers its placeholders (a value used twice is one `$n`); `?` is positional.
    parts.push(sql.val(m[1] === undefined ? params[next++] : params[Number(m[1]) - 1]));
    last = m.index + m[0].length;
  }
  parts.push(sql.raw(text.slice(last)));
  return sql<SqlBool>`(${sql.join(parts, sql.raw(''))})`;
}

/**
 * The deferred join of an offset page: `query`'s rows whose unique key is among the
 * `k.limit` keys at `k.offset` of the same query in page order, sorted the same way.
 * The key is the spec's last column, unique among the rows `query` selects, so each key
 * of the subquery joins back to exactly one row and the page is the plain query's page.
 */
function deferredOffset<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, k: KeysetQuery, unique: string): SelectQueryBuilder<DB, TB, O> {
  const keys = query.clearSelect().select(sql.ref(unique).as(PAGE_KEY)).orderBy(sql.raw(k.orderBy)).limit(k.limit).offset(k.offset);
  // ORDER BY first: Kysely places each clause where SQL wants it, whatever the call order.
  const joined = query
    .orderBy(sql.raw(k.orderBy))
    .innerJoin(keys.as(PAGE), (join) => join.on(sql<SqlBool>`${sql.ref(unique)} = ${sql.ref(`${PAGE}.${PAGE_KEY}`)}`));
  // The join adds a table the caller never names; the selection `O` is unchanged.
  return joined as unknown as SelectQueryBuilder<DB, TB, O>;
}

/**
 * Restricts `query` to the page `plan` describes: the rows strictly after the cursor
 * (cursor mode), in `sort` order, `plan.take` of them (one more than the page, for
 * has-more), from `plan.offset` in offset mode (past the first row a deferred join,
 * except on SQLite: see the module comment). Call `keysetPage` on the fully filtered
 * query and add no `where` after it, or the offset subquery would count rows the page
 * then drops. `sort` is `plan.sort` (the page's own sort, which a client may have
 * chosen), or a literal spec equal to it for the compile-time column check. A backward
 * page (`prevCursor`) comes back in fetch order: pass the rows to `Paginator.page` as
 * they are, it restores sort order. `dialect` is the database Kysely talks to:
 * `'postgres'` (pg, PGlite), `'sqlite'` or `'mysql'` (MySQL, MariaDB). Leave ordering
 * and limits to this function. A cursor page's rows carry their sort values as the
 * database wrote them (see the module comment): hand them to `Paginator.page` as
 * `execute()` returns them, with the driver at its defaults.
 *
 * Column names in `sort` are SQL references as the query sees them (`'created_at'`,
 * `'o.created_at'` with `selectFrom('orders as o')`); literal ones are type-checked.
 * Throws what `keysetWhere` throws: `ConfigError` for a bad spec, `TypeError` for a plan
 * that does not fit it.
 *
 * @example
 * ```ts
 * const plan = await orders.plan(url.searchParams, { filters: { status } });
 * const rows = await keysetPage(
 *   db.selectFrom('orders as o').select(['o.id', 'o.created_at as createdAt']).where('o.status', '=', status),
 *   plan,
 *   plan.sort,
 *   'postgres',
 * ).execute();
 * const { body, headers } = await orders.page(plan, rows, { url });
 * ```
 */
export function keysetPage<DB, TB extends keyof DB, O, const S extends readonly SortKey[]>(
  query: SelectQueryBuilder<DB, TB, O>,
  plan: PagePlan,
  sort: S & CheckedSortSpec<DB, TB, S>,
  dialect: SqlDialect,
): SelectQueryBuilder<DB, TB, O> {
  const k = keysetWhere(plan, sort, dialect);
  if (k.offset > 0 && dialect !== 'sqlite') {
    const last = sort[sort.length - 1]!;
    return deferredOffset(query, k, last.column ?? last.key);
  }
  const q = ALWAYS.has(k.where) ? query : query.where(condition(k.where, k.params, dialect));
  // Only a cursor page makes a cursor from its rows; offset links are numbers.
  const page = (plan.mode === 'cursor' ? withExactSortValues(q, sort, dialect) : q).orderBy(sql.raw(k.orderBy)).limit(k.limit);
  return k.offset > 0 ? page.offset(k.offset) : page;
}
