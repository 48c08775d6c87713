/**
 * @keyset/kysely: keyset pagination for Kysely queries on PostgreSQL (pg, PGlite),
 * SQLite and MySQL/MariaDB: the cursor condition, ORDER BY, LIMIT/OFFSET of a
 * `PagePlan`, and a count for offset mode's `total`.
 * @module
 */
export { countRows } from './count-rows.ts';
export { keysetPage } from './keyset-page.ts';
export type { CheckedSortSpec } from './keyset-page.ts';
