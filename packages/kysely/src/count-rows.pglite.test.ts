/** countRows with a limit and estimateRows on PGlite (embedded PostgreSQL), through countTotal's total modes. */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { countTotal, createPaginator, type TotalOption } from '@keyset/core';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, estimateRows } from './count-rows.ts';
import { pgliteDialect } from './kysely-walks.test-support.ts';

interface DB {
  orders: { id: number; status: string };
}

let client: PGlite;
let db: Kysely<DB>;

beforeAll(async () => {
  client = await createPglite();
  await client.exec(`CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL);
    INSERT INTO orders SELECT g, CASE WHEN g % 4 = 0 THEN 'refunded' ELSE 'paid' END FROM generate_series(1, 2000) AS g;
    ANALYZE orders;`);
  db = new Kysely<DB>({ dialect: pgliteDialect(client) as never });
}, 60_000);

afterAll(async () => {
  await db?.destroy();
  await client?.close();
});

const refunded = () => db.selectFrom('orders').select('id').where('status', '=', 'refunded');

describe('countRows and estimateRows on PGlite', () => {
  it('countRows stops at the limit, and ignores the query own order, limit and offset', async () => {
    expect(await countRows(db, refunded())).toBe(500);
    expect(await countRows(db, refunded(), { limit: 101 })).toBe(101);
    expect(await countRows(db, refunded().orderBy('id').limit(3), { limit: 1000 })).toBe(500);
    await expect(countRows(db, refunded(), { limit: 0 })).rejects.toThrow(RangeError);
  });

  it('estimateRows is the planner estimate: close to the count for analysed statistics, filter and parameters included', async () => {
    const all = await estimateRows(db, db.selectFrom('orders').selectAll());
    expect(all).toBe(2000);
    const filtered = await estimateRows(db, refunded().orderBy('id').limit(5));
    expect(Math.abs(filtered - 500)).toBeLessThanOrEqual(50);
  });

  it.each<[TotalOption, unknown]>([
    ['exact', { value: 500, accuracy: 'exact' }],
    [{ mode: 'exact', cap: 100 }, { value: 100, accuracy: 'atLeast' }],
    ['estimated', { value: expect.any(Number), accuracy: 'estimated' }],
    ['none', undefined],
  ])('countTotal with total %j runs the matching count', async (total, expected) => {
    const paginator = createPaginator({ endpoint: 'GET /orders', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], total, cursor: { secrets: ['kysely-count-rows-test-secret-0123456789'] } });
    const plan = await paginator.plan(new URLSearchParams('offset=0'));
    const counted = await countTotal(plan, { count: (limit) => countRows(db, refunded(), limit === undefined ? {} : { limit }), estimate: () => estimateRows(db, refunded()) });
    expect(counted).toEqual(expected);
  });

  it('estimateRows refuses a database whose EXPLAIN has no row estimate (SQLite)', async () => {
    const sqlite = new Kysely<DB>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    try {
      await sqlite.schema.createTable('orders').addColumn('id', 'integer').addColumn('status', 'text').execute();
      await expect(estimateRows(sqlite, sqlite.selectFrom('orders').selectAll())).rejects.toThrow(/PostgreSQL only/);
    } finally {
      await sqlite.destroy();
    }
  });
});
