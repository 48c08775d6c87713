/**
 * Offset mode's `total`, counted by the database through Drizzle's `$count` (optionally
 * stopping at a limit), or estimated by PostgreSQL's planner. `countTotal` from
 * `@keyset/core` picks between them per the endpoint's total mode.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import { sql, type SQL, type Table } from 'drizzle-orm';

// drizzle-orm's own marker on alias() proxies (`Table.Symbol.IsAlias`, not in its public types).
const IS_ALIAS = Symbol.for('drizzle:IsAlias');

/** What `countRows` needs from a Drizzle database: pg-core, mysql-core and sqlite-core ones all have it. */
export interface CountingDatabase {
  $count(source: Table | SQL, filters?: SQL): PromiseLike<number>;
}

/** Options of {@link countRows}. */
export interface CountRowsOptions {
  /**
   * Stop counting after this many rows (`select count(*) from (select 1 … limit $limit)`),
   * so the count costs at most `limit` rows: what `countTotal` asks for under a capped
   * exact total.
   * @default no limit
   */
  limit?: number;
}

/** Every name `CountRowsOptions` knows, checked on each call (a misspelt `limit` would count every row). */
const COUNT_ROWS_OPTIONS = { limit: true } as const satisfies KnownOptions<CountRowsOptions>;

/** What `estimateRows` needs from a Drizzle PostgreSQL database (node-postgres, PGlite, postgres.js). */
export interface ExplainingDatabase {
  execute(query: SQL): PromiseLike<unknown>;
}

function checkTable(table: Table, name: string): void {
  if ((table as unknown as Record<symbol, unknown>)[IS_ALIAS] === true) {
    throw new ConfigError(`${name}: pass the table itself, not an alias() of it, and filters over its own columns`);
  }
}

/**
 * The number of rows of `table` matching `filters`: the same filters as the page, not
 * the page's keyset condition. `table` is the table itself, not an `alias()` of it
 * (Drizzle's `$count` would name the alias as if it were a table); write `filters`
 * over the table's own columns.
 *
 * @example
 * ```ts
 * const filters = eq(orders.status, 'paid');
 * const total = plan.mode === 'offset' ? await countRows(db, orders, filters) : undefined;
 * ```
 */
export async function countRows(db: CountingDatabase, table: Table, filters?: SQL, options: CountRowsOptions = {}): Promise<number> {
  assertKnownOptions('countRows', options, COUNT_ROWS_OPTIONS);
  checkTable(table, 'countRows');
  const { limit } = options;
  if (limit === undefined) {
    // Some drivers hand counts back as text or bigint; the total is a JS number.
    return Number(await db.$count(table, filters));
  }
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`countRows: limit must be a positive integer, got ${String(limit)}`);
  const where = filters === undefined ? sql`` : sql` where ${filters}`;
  return Number(await db.$count(sql`(select 1 from ${table}${where} limit ${sql.raw(String(limit))}) as keyset_count`));
}

/**
 * PostgreSQL's estimate of the rows of `table` matching `filters`: the top plan node's
 * `Plan Rows` from `EXPLAIN (FORMAT JSON)`. Planning only, so it costs the same at any
 * table size; as good as the table's statistics (`ANALYZE`). PostgreSQL only (pg-core on
 * node-postgres, PGlite or postgres.js): MySQL's and SQLite's EXPLAIN give no row estimate
 * of the result, so use `countRows` there.
 *
 * @example
 * ```ts
 * const total = await countTotal(plan, {
 *   count: (limit) => countRows(db, orders, filters, limit === undefined ? {} : { limit }),
 *   estimate: () => estimateRows(db, orders, filters),
 * });
 * ```
 */
export async function estimateRows(db: ExplainingDatabase, table: Table, filters?: SQL): Promise<number> {
  checkTable(table, 'estimateRows');
  const where = filters === undefined ? sql`` : sql` where ${filters}`;
  const result = await Promise.resolve(db.execute(sql`explain (format json) select 1 from ${table}${where}`)).catch((cause: unknown) => {
    throw new TypeError('estimateRows: EXPLAIN (FORMAT JSON) failed (PostgreSQL only)', { cause });
  });
  // node-postgres and PGlite answer { rows }, postgres.js the rows themselves.
  const rows = (Array.isArray(result) ? result : (result as { rows?: unknown[] } | undefined)?.rows ?? []) as Record<string, unknown>[];
  const cell = rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [{ Plan?: { 'Plan Rows'?: unknown } }] | undefined;
  const estimate = Number(plan?.[0]?.Plan?.['Plan Rows']);
  if (!Number.isFinite(estimate)) throw new TypeError('estimateRows: EXPLAIN gave no row estimate (PostgreSQL only)');
  return Math.max(0, estimate);
}
