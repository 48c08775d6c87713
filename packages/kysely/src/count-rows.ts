/**
 * Offset mode's `total`: the rows a filtered query matches, counted by the database.
 * @module
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';

/**
 * Counts the rows `query` selects, as `select count(*) from (query)`: joins, `distinct`
 * and `group by` count as they page. Pass the filtered query *before* `keysetPage` (the
 * page's own condition, order and limit are not part of the total); its ORDER BY, LIMIT
 * and OFFSET are dropped.
 *
 * @example
 * ```ts
 * const filtered = db.selectFrom('orders').selectAll().where('status', '=', status);
 * const [rows, total] = await Promise.all([keysetPage(filtered, plan, plan.sort, 'postgres').execute(), countRows(db, filtered)]);
 * const { body, headers } = await orders.page(plan, rows, { url, total });
 * ```
 */
// `any`: the query's database type may be wider than `db`'s (table aliases add to it).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function countRows<DB>(db: Kysely<DB>, query: SelectQueryBuilder<any, any, any>): Promise<number> {
  const inner = query.clearOrderBy().clearLimit().clearOffset().as('keyset_count');
  const row = await (db as unknown as Kysely<Record<string, never>>)
    .selectFrom(inner as never)
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL's count is a bigint (text in pg), MySQL's may be text with bigNumberStrings.
  return Number(row.n);
}
