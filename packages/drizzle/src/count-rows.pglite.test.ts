/** countRows with a limit and estimateRows (Drizzle pg-core) on PGlite, through countTotal's total modes. */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { countTotal, createPaginator, type TotalOption } from '@keyset/core';
import { eq } from 'drizzle-orm';
import * as pg from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, estimateRows } from './count-rows.ts';

const orders = pg.pgTable('orders', { id: pg.integer('id').primaryKey(), status: pg.text('status').notNull() });

let client: PGlite;
let db: ReturnType<typeof drizzle>;

beforeAll(async () => {
  client = await createPglite();
  await client.exec(`CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL);
    INSERT INTO orders SELECT g, CASE WHEN g % 4 = 0 THEN 'refunded' ELSE 'paid' END FROM generate_series(1, 2000) AS g;
    ANALYZE orders;`);
  db = drizzle(client);
}, 60_000);

afterAll(async () => {
  await client?.close();
});

const refunded = () => eq(orders.status, 'refunded');

describe('countRows and estimateRows (Drizzle) on PGlite', () => {
  it('countRows stops at the limit', async () => {
    expect(await countRows(db, orders, refunded())).toBe(500);
    expect(await countRows(db, orders, refunded(), { limit: 101 })).toBe(101);
    expect(await countRows(db, orders, undefined, { limit: 5000 })).toBe(2000);
  });

  it('estimateRows is the planner estimate, filters and parameters included', async () => {
    expect(await estimateRows(db, orders)).toBe(2000);
    expect(Math.abs((await estimateRows(db, orders, refunded())) - 500)).toBeLessThanOrEqual(50);
    await expect(estimateRows(db, pg.alias(orders, 'o'))).rejects.toThrow(/alias/);
  });

  it.each<[TotalOption, unknown]>([
    ['exact', { value: 500, accuracy: 'exact' }],
    [{ mode: 'exact', cap: 100 }, { value: 100, accuracy: 'atLeast' }],
    ['estimated', { value: expect.any(Number), accuracy: 'estimated' }],
    ['none', undefined],
  ])('countTotal with total %j runs the matching count', async (total, expected) => {
    const paginator = createPaginator({ endpoint: 'GET /orders', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], total, cursor: { secrets: ['drizzle-count-rows-test-secret-0123456789'] } });
    const plan = await paginator.plan(new URLSearchParams('offset=0'));
    const counted = await countTotal(plan, {
      count: (limit) => countRows(db, orders, refunded(), limit === undefined ? {} : { limit }),
      estimate: () => estimateRows(db, orders, refunded()),
    });
    expect(counted).toEqual(expected);
  });
});
