/**
 * @keyset/prisma: keyset pagination for Prisma Client (Prisma 7, driver adapters for
 * PostgreSQL and SQLite): a `PagePlan`'s condition, order, `take` and `skip` on your
 * `findMany` arguments, exact microsecond timestamps on PostgreSQL, and a `count` for
 * offset mode's `total`.
 * @module
 */
export { countRows } from './count-rows.ts';
export type { CountRowsOptions } from './count-rows.ts';
export { findManyPage } from './find-many-page.ts';
export type { FindManyPageOptions, PageRow, PrismaDelegate, RawQueryClient, TimestampReading } from './find-many-page.ts';
