/**
 * The one capability the store needs from a PostgreSQL driver. Described structurally
 * (like kysely's `PostgresPool`), so `@keyset/postgres` imports no driver: a
 * node-postgres `Pool` or `Client`, a PGlite instance, or any wrapper with this shape fits.
 * @module
 */

/** What a query resolves with. Only `rows` is read; `rowCount` is accepted, never needed. */
export interface QueryResultLike {
  rows: any[];
  rowCount?: number | null;
}

/**
 * A PostgreSQL client: runs one statement with `$1…$n` parameters.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const client: Queryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>;
}

/**
 * A client that can also run several statements in one call (PGlite's `exec`). `migrate()`
 * uses it when present, because PGlite's `query()` accepts one statement only; on
 * node-postgres a parameterless `query()` already takes several.
 */
export interface MultiStatementQueryable extends Queryable {
  exec?(text: string): Promise<unknown>;
}
