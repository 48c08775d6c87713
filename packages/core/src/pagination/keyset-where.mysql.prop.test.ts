/** SQL walk properties through keysetWhere(…, 'mysql') on a real MySQL/MariaDB server (skips when none answers). */
import { mysqlUrl } from '@keyset/test-support';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrentWalk, staticWalk, timestampText } from './dialect-walks.test-support.ts';
import { createTestDatabase, MYSQL_ITEMS_DDL, MYSQL_OPTIONS, rawMysqlSource } from './mysql.test-support.ts';

const url = await mysqlUrl();
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: mysql.Connection;
/** A connection at mysql2's defaults: DATETIME as a Date, BIGINT as a JS number. */
let defaults: mysql.Connection;

beforeAll(async () => {
  if (url === undefined) return;
  database = await createTestDatabase(url, 'keyset_walk');
  db = await mysql.createConnection({ uri: database.url, ...MYSQL_OPTIONS });
  await db.query(MYSQL_ITEMS_DDL);
  defaults = await mysql.createConnection({ uri: database.url });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.end();
  await defaults.end();
  await database.drop();
});

describe.skipIf(url === undefined)("keysetWhere(…, 'mysql') on MySQL/MariaDB", () => {
  it('the driver returns DATETIME(6) and BIGINT losslessly with the documented options', async () => {
    const [rows] = await db.query(`SELECT CAST('2024-05-01 10:00:00.000001' AS DATETIME(6)) AS t, CAST('9007199254740993' AS SIGNED) AS n`);
    expect(rows).toEqual([{ t: '2024-05-01 10:00:00.000001', n: '9007199254740993' }]);
    expect(timestampText('2024-05-01 10:00:00.000001+00', 'mysql')).toBe('2024-05-01 10:00:00.000001');
  });

  it('cursor walk yields every row once in sort order; offset walk agrees; walking back revisits the pages reversed', () => staticWalk(rawMysqlSource(db), 25), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(rawMysqlSource(db), 25), 120_000);
});

describe.skipIf(url === undefined)("keysetWhere(…, 'mysql') with mysql2 at its defaults, the SQL selecting BIGINT and DATETIME(6) as text", () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(rawMysqlSource(defaults, true), 20, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(rawMysqlSource(defaults, true), 20, { wideDecimals: true }), 120_000);
});
