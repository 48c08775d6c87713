/** Walk properties through the Drizzle keysetPage on a real MySQL/MariaDB server via mysql2 (skips when none answers). */
import { mysqlUrl } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { createTestDatabase, MYSQL_ITEMS_DDL, MYSQL_OPTIONS } from '../../core/src/pagination/mysql.test-support.ts';
import { eq } from 'drizzle-orm';
import { countRows } from './count-rows.ts';
import { drizzleDefaultsSource, drizzleOffsetSource, drizzleSource, mysqlItems } from './drizzle-walks.test-support.ts';

const url = await mysqlUrl();
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: mysql.Pool;
/** The same database through a pool left at mysql2's defaults: BIGINT as a JS number. */
let defaults: mysql.Pool;

beforeAll(async () => {
  if (url === undefined) return;
  database = await createTestDatabase(url, 'keyset_drizzle_walk');
  // dateStrings: DATETIME(6) as text with its microseconds; bigNumberStrings: exact BIGINT.
  pool = mysql.createPool({ uri: database.url, connectionLimit: 2, ...MYSQL_OPTIONS });
  await pool.query(MYSQL_ITEMS_DDL);
  defaults = mysql.createPool({ uri: database.url, connectionLimit: 2 });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await pool.end();
  await defaults.end();
  await database.drop();
});

describe.skipIf(url === undefined)('Drizzle keysetPage on MySQL/MariaDB (mysql2)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(drizzleSource(drizzle({ client: pool }), 'mysql'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(drizzleOffsetSource(drizzle({ client: pool }), 'mysql'), 20), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleSource(drizzle({ client: pool }), 'mysql'), 20), 120_000);
  it('countRows stops at a limit (a capped total) on MySQL/MariaDB, filters included', async () => {
    await pool.query('DELETE FROM items');
    await pool.query(
      `INSERT INTO items (id, tenant, created_at, grp, score, label, flag) VALUES
       (1, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false), (2, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false),
       (3, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false), (4, 2, '2024-01-01 00:00:00', 0, NULL, NULL, false)`,
    );
    const db = drizzle({ client: pool });
    expect(await countRows(db, mysqlItems, eq(mysqlItems.tenant, 1), { limit: 2 })).toBe(2);
    expect(await countRows(db, mysqlItems, eq(mysqlItems.tenant, 1), { limit: 10 })).toBe(3);
    expect(await countRows(db, mysqlItems, undefined, { limit: 10 })).toBe(4);
  });
});

describe.skipIf(url === undefined)('Drizzle keysetPage on MySQL/MariaDB (mysql2) at the driver\'s defaults, default column modes (Date timestamps, number ids): cursors from page.select', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(drizzleDefaultsSource(drizzle({ client: defaults }), 'mysql'), 20, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleDefaultsSource(drizzle({ client: defaults }), 'mysql'), 20, { wideDecimals: true }), 120_000);
});
