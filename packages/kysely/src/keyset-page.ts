/**
 * One page of a Kysely select: the keyset condition, ORDER BY, LIMIT and OFFSET of a
 * `PagePlan`, written by `@keyset/core`'s `keysetWhere` (the single place that decides
 * the SQL: row values or the OR-expansion with its leading range bound, NULL placement,
 * exact casts) and handed to Kysely as SQL with bound parameters.
 * @module
 */
import { keysetWhere, type PagePlan, type SortKey, type SqlDialect } from '@keyset/core';
import { sql, type RawBuilder, type SelectQueryBuilder, type SqlBool, type StringReference } from 'kysely';

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
 * Restricts `query` to the page `plan` describes: the rows strictly after the cursor
 * (cursor mode), in `sort` order, `plan.take` of them (one more than the page, for
 * has-more), from `plan.offset` in offset mode. `sort` is `plan.sort` (the page's own
 * sort, which a client may have chosen), or a literal spec equal to it for the
 * compile-time column check. A backward page (`prevCursor`) comes back in fetch order:
 * pass the rows to `Paginator.page` as they are, it restores sort order. `dialect` is the database Kysely talks to: `'postgres'` (pg, PGlite),
 * `'sqlite'` or `'mysql'` (MySQL, MariaDB). Leave ordering and limits to this function.
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
  let q = ALWAYS.has(k.where) ? query : query.where(condition(k.where, k.params, dialect));
  q = q.orderBy(sql.raw(k.orderBy)).limit(k.limit);
  return k.offset > 0 ? q.offset(k.offset) : q;
}
