/**
 * Offset mode's `total`, counted by the database through Drizzle's `$count`.
 * @module
 */
import { ConfigError } from '@keyset/core';
import type { SQL, Table } from 'drizzle-orm';

// drizzle-orm's own marker on alias() proxies (`Table.Symbol.IsAlias`, not in its public types).
const IS_ALIAS = Symbol.for('drizzle:IsAlias');

/** What `countRows` needs from a Drizzle database: pg-core, mysql-core and sqlite-core ones all have it. */
export interface CountingDatabase {
  $count(source: Table, filters?: SQL): PromiseLike<number>;
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
export async function countRows(db: CountingDatabase, table: Table, filters?: SQL): Promise<number> {
  if ((table as unknown as Record<symbol, unknown>)[IS_ALIAS] === true) {
    throw new ConfigError('countRows: pass the table itself, not an alias() of it, and filters over its own columns');
  }
  // Some drivers hand counts back as text or bigint; the total is a JS number.
  return Number(await db.$count(table, filters));
}
