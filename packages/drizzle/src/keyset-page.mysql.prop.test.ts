/** Walk properties through the Drizzle keysetPage on a real MySQL/MariaDB server via mysql2 (skips when none answers). */
import { mysqlUrl } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { createTestDatabase, MYSQL_ITEMS_DDL, MYSQL_OPTIONS } from '../../core/src/pagination/mysql.test-support.ts';
import { drizzleSource } from './drizzle-walks.test-support.ts';

const url = await mysqlUrl();
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: mysql.Pool;

beforeAll(async () => {
  if (url === undefined) return;
  database = await createTestDatabase(url, 'keyset_drizzle_walk');
  // dateStrings: DATETIME(6) as text with its microseconds; bigNumberStrings: exact BIGINT.
  pool = mysql.createPool({ uri: database.url, connectionLimit: 2, ...MYSQL_OPTIONS });
  await pool.query(MYSQL_ITEMS_DDL);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await pool.end();
  await database.drop();
});

describe.skipIf(url === undefined)('Drizzle keysetPage on MySQL/MariaDB (mysql2)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(drizzleSource(drizzle({ client: pool }), 'mysql'), 20), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleSource(drizzle({ client: pool }), 'mysql'), 20), 120_000);
});
