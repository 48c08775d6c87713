/**
 * @keyset/kysely: keyset pagination for Kysely queries on PostgreSQL (pg, PGlite),
 * SQLite and MySQL/MariaDB: the cursor condition, ORDER BY, LIMIT/OFFSET of a
 * `PagePlan`, and a count (or PostgreSQL's estimate) for offset mode's `total`.
 * @module
 */
export { countRows, estimateRows } from './count-rows.ts';
export type { CountRowsOptions } from './count-rows.ts';
export { keysetPage } from './keyset-page.ts';
// The `timestamptz` type parser the Kysely recipe passes to pg and PGlite.
export { isoTimestamp } from '@keyset/core';
export type { CheckedSortSpec } from './keyset-page.ts';
