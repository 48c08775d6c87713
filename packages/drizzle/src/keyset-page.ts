/**
 * One page for a Drizzle select: the keyset condition and ORDER BY of a `PagePlan`,
 * written by `@keyset/core`'s `keysetWhere` (the single place that decides the SQL:
 * row values or the OR-expansion with its leading range bound, NULL placement, exact
 * casts), as Drizzle `SQL` with bound parameters for `.where()` and `.orderBy()`.
 * @module
 */
import { ConfigError, keysetWhere, type PagePlan, type SortSpec, type SqlDialect } from '@keyset/core';
import { getTableColumns, getTableName, is, sql, Table, type SQL } from 'drizzle-orm';
import { MySqlTable } from 'drizzle-orm/mysql-core';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';

/** The clauses of one page: spread them into the query. */
export interface KeysetClauses {
  /** The keyset condition; `undefined` on a first page and in offset mode (`and()` skips it). */
  where: SQL | undefined;
  /** The ORDER BY list, for `.orderBy(...clauses.orderBy)`. */
  orderBy: SQL[];
  /** `plan.take`: one row more than the page, for has-more. */
  limit: number;
  /** `plan.offset` in offset mode, else 0. */
  offset: number;
}

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

/** `keysetWhere`'s text and parameters as Drizzle SQL with bound values. */
function condition(text: string, params: readonly unknown[], dialect: SqlDialect): SQL {
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
 * The clauses of the page `plan` describes, for a query over `table` (a pg-core,
 * mysql-core or sqlite-core table, or an `alias()` of one; it picks the SQL dialect):
 * the rows strictly after the cursor in `sort` order, `plan.take` of them (one more than
 * the page, for has-more), from `plan.offset` in offset mode. `sort` is `plan.sort`. A
 * backward page (`prevCursor`) comes back in fetch order: pass the rows to
 * `Paginator.page` as they are, it restores sort order.
 *
 * Sort columns are SQL names as the query sees them: `created_at`, or `o.created_at`
 * when the query joins or aliases. Throws `ConfigError` for a bad spec or a column the
 * table does not have, `TypeError` for a plan that does not fit the spec.
 *
 * @example
 * ```ts
 * const page = keysetPage(orders, plan, plan.sort);
 * const rows = await db.select().from(orders)
 *   .where(and(eq(orders.status, 'paid'), page.where))
 *   .orderBy(...page.orderBy).limit(page.limit).offset(page.offset);
 * ```
 */
export function keysetPage(table: Table, plan: PagePlan, sort: SortSpec): KeysetClauses {
  const dialect = dialectOf(table);
  checkColumns(table, sort);
  const k = keysetWhere(plan, sort, dialect);
  return {
    where: ALWAYS.has(k.where) ? undefined : condition(k.where, k.params, dialect),
    // Items are `col DIR[ NULLS …]` or MySQL's `col IS NULL DIR`: identifiers never hold ", ".
    orderBy: k.orderBy.split(', ').map((item) => sql.raw(item)),
    limit: k.limit,
    offset: k.offset,
  };
}
