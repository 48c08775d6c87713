/** Walk properties through the Drizzle keysetPage on a real PostgreSQL server via pg (skips when none answers). */
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { drizzleDefaultsSource, drizzleOffsetSource, drizzleSource } from './drizzle-walks.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_drizzle_walk');
let pool: pg.Pool;

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema} -c TimeZone=UTC` });
  await pool.query(ITEMS_DDL);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
});

describe.skipIf(url === undefined)('Drizzle keysetPage on PostgreSQL (node-postgres)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(drizzleSource(drizzle({ client: pool }), 'postgres'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(drizzleOffsetSource(drizzle({ client: pool }), 'postgres'), 30), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleSource(drizzle({ client: pool }), 'postgres'), 20), 120_000);
});

describe.skipIf(url === undefined)('Drizzle keysetPage on PostgreSQL (node-postgres) with default column modes (Date timestamps, number ids): cursors from page.select', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(drizzleDefaultsSource(drizzle({ client: pool }), 'postgres'), 20, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleDefaultsSource(drizzle({ client: pool }), 'postgres'), 20, { wideDecimals: true }), 120_000);
});
