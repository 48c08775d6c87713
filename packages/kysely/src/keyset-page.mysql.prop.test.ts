/** Walk properties through keysetPage on a real MySQL/MariaDB server via mysql2 (skips when none answers). */
import { mysqlUrl } from '@keyset/test-support';
import { Kysely, MysqlDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { createTestDatabase, MYSQL_ITEMS_DDL, MYSQL_OPTIONS } from '../../core/src/pagination/mysql.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { countRows } from './count-rows.ts';
import { kyselyDefaultsSource, kyselyOffsetSource, kyselySource, type WalkDB } from './kysely-walks.test-support.ts';

const url = await mysqlUrl();
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Kysely<WalkDB>;
/** The same table through a pool left at mysql2's defaults: DATETIME as a Date, BIGINT as a JS number. */
let defaults: Kysely<WalkDB>;

beforeAll(async () => {
  if (url === undefined) return;
  database = await createTestDatabase(url, 'keyset_kysely_walk');
  // dateStrings: DATETIME(6) as text with its microseconds; bigNumberStrings: exact BIGINT.
  db = new Kysely<WalkDB>({ dialect: new MysqlDialect({ pool: createPool({ uri: database.url, connectionLimit: 2, ...MYSQL_OPTIONS }) }) });
  await sql.raw(MYSQL_ITEMS_DDL).execute(db);
  defaults = new Kysely<WalkDB>({ dialect: new MysqlDialect({ pool: createPool({ uri: database.url, connectionLimit: 2 }) }) });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.destroy();
  await defaults.destroy();
  await database.drop();
});

describe.skipIf(url === undefined)('keysetPage on MySQL/MariaDB (mysql2)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(kyselySource(db, 'mysql'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(kyselyOffsetSource(db, 'mysql'), 20), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselySource(db, 'mysql'), 20), 120_000);
  it('countRows stops at a limit (a capped total) on MySQL/MariaDB, filters included', async () => {
    await sql`DELETE FROM items`.execute(db);
    await sql`INSERT INTO items (id, tenant, created_at, grp, score, label, flag) VALUES
      (1, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false), (2, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false),
      (3, 1, '2024-01-01 00:00:00', 0, NULL, NULL, false), (4, 2, '2024-01-01 00:00:00', 0, NULL, NULL, false)`.execute(db);
    const tenant1 = db.selectFrom('items').select('id').where('tenant', '=', 1).orderBy('id');
    expect(await countRows(db, tenant1, { limit: 2 })).toBe(2);
    expect(await countRows(db, tenant1, { limit: 10 })).toBe(3);
    expect(await countRows(db, db.selectFrom('items').selectAll(), { limit: 10 })).toBe(4);
  });
});

describe.skipIf(url === undefined)('keysetPage on MySQL/MariaDB (mysql2) at the driver\'s defaults: cursors from keysetPage\'s own exact values', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(kyselyDefaultsSource(defaults, 'mysql'), 20, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselyDefaultsSource(defaults, 'mysql'), 20, { wideDecimals: true }), 120_000);
});
