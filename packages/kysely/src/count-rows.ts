/**
 * Offset mode's `total`: the rows a filtered query matches, counted by the database
 * (`countRows`, optionally stopping at a limit) or estimated by PostgreSQL's planner
 * (`estimateRows`). `countTotal` from `@keyset/core` picks between them per the endpoint's
 * total mode.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import { CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';

/**
 * Counts the rows `query` selects, as `select count(*) from (query)`: joins, `distinct`
 * and `group by` count as they page. Pass the filtered query *before* `keysetPage` (the
 * page's own condition, order and limit are not part of the total); its ORDER BY, LIMIT
 * and OFFSET are dropped.
 *
 * @example
 * ```ts
 * const filtered = db.selectFrom('orders').selectAll().where('status', '=', status);
 * const [rows, total] = await Promise.all([
 *   keysetPage(filtered, plan, plan.sort, 'postgres').execute(),
 *   countTotal(plan, { count: (limit) => countRows(db, filtered, { limit }), estimate: () => estimateRows(db, filtered) }),
 * ]);
 * const { body, headers } = await orders.page(plan, rows, total === undefined ? { url } : { url, total });
 * ```
 */
/** Options of {@link countRows}. */
export interface CountRowsOptions {
  /**
   * Stop counting after this many rows (`select count(*) from (query limit $limit)`), so the
   * count costs at most `limit` rows: what `countTotal` asks for under a capped exact total.
   * @default no limit
   */
  limit?: number;
}

/** Every name `CountRowsOptions` knows, checked on each call (a misspelt `limit` would count every row). */
const COUNT_ROWS_OPTIONS = { limit: true } as const satisfies KnownOptions<CountRowsOptions>;

// `any`: the query's database type may be wider than `db`'s (table aliases add to it).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function countRows<DB>(db: Kysely<DB>, query: SelectQueryBuilder<any, any, any>, options: CountRowsOptions = {}): Promise<number> {
  assertKnownOptions('countRows', options, COUNT_ROWS_OPTIONS);
  const { limit } = options;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new RangeError(`countRows: limit must be a positive integer, got ${String(limit)}`);
  const bare = query.clearOrderBy().clearLimit().clearOffset();
  const inner = (limit === undefined ? bare : bare.limit(limit)).as('keyset_count');
  const row = await (db as unknown as Kysely<Record<string, never>>)
    .selectFrom(inner as never)
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  // PostgreSQL's count is a bigint (text in pg), MySQL's may be text with bigNumberStrings.
  return Number(row.n);
}

/**
 * PostgreSQL's estimate of the rows `query` selects: the top plan node's `Plan Rows` from
 * `EXPLAIN (FORMAT JSON)`. Planning only, so it costs the same at any table size; as good
 * as the table's statistics (`ANALYZE`). Pass the filtered query *before* `keysetPage`
 * (its ORDER BY, LIMIT and OFFSET are dropped). PostgreSQL and PGlite only: MySQL's and
 * SQLite's EXPLAIN give no row estimate of the result, so use `countRows` there.
 *
 * @example
 * ```ts
 * const total = await countTotal(plan, { count: (limit) => countRows(db, filtered, { limit }), estimate: () => estimateRows(db, filtered) });
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function estimateRows<DB>(db: Kysely<DB>, query: SelectQueryBuilder<any, any, any>): Promise<number> {
  const compiled = query.clearOrderBy().clearLimit().clearOffset().compile();
  const explain = CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]);
  const result = await db.executeQuery<Record<string, unknown>>(explain).catch((cause: unknown) => {
    throw new TypeError('estimateRows: EXPLAIN (FORMAT JSON) failed (PostgreSQL only)', { cause });
  });
  const cell = result.rows[0] === undefined ? undefined : Object.values(result.rows[0])[0];
  // pg and PGlite parse the json column; a driver that does not hands back text.
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined;
  const estimate = Number(plan?.[0]?.Plan?.['Plan Rows']);
  if (!Number.isFinite(estimate)) throw new TypeError('estimateRows: EXPLAIN gave no row estimate (PostgreSQL only)');
  return Math.max(0, estimate);
}
