/**
 * PostgreSQL's own guess at how many rows a query returns: the top plan node's row
 * estimate from `EXPLAIN (FORMAT JSON)`. Planning only (nothing is read beyond the
 * statistics), so it costs the same at a thousand rows or a billion; without a WHERE it is
 * `pg_class.reltuples` scaled to the table's current size, with one it applies the column
 * statistics (`ANALYZE`) to the filters. Same SQL on PGlite and PostgreSQL.
 * @module
 */
import type { SqlClient } from './database.ts';

/**
 * The planner's row estimate for `sql` (a SELECT, with its parameters).
 *
 * @example
 * ```ts
 * const guess = await estimateRows(db, 'SELECT 1 FROM orders WHERE status = $1', ['paid']);
 * ```
 */
export async function estimateRows(db: SqlClient, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
  const cell = rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  // node-postgres and PGlite parse the json column; a driver that does not hands back text.
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined;
  const estimate = Number(plan?.[0]?.Plan?.['Plan Rows']);
  return Number.isFinite(estimate) && estimate > 0 ? estimate : 0;
}
