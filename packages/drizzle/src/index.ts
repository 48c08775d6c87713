/**
 * @keyset/drizzle: keyset pagination for Drizzle ORM queries on PostgreSQL (pg-core),
 * SQLite (sqlite-core) and MySQL/MariaDB (mysql-core): the cursor condition and ORDER BY
 * list of a `PagePlan`, and a count (or PostgreSQL's estimate) for offset mode's `total`.
 * @module
 */
export { countRows, estimateRows } from './count-rows.ts';
export type { CountingDatabase, CountRowsOptions, ExplainingDatabase } from './count-rows.ts';
export { keysetPage } from './keyset-page.ts';
export type { KeysetClauses, KeysetPageOptions, SelectingDatabase } from './keyset-page.ts';
