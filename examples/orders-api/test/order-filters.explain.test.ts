/**
 * The filtered walks of `GET /api/orders` are served by the indexes the migration creates:
 * on 20,000 seeded orders, ANALYZEd, the page query the handler runs (`orderPageQuery`)
 * for a rare status or one customer, under the default sort and `?sort=amountCents`, in
 * both directions, reads one range of the (filter, sort) index: its Index Cond holds the
 * filter and the cursor's row bound, and nothing scans the table. (For a few dozen rows
 * the planner may fetch that range as a bitmap and sort it, which is its cheapest plan
 * there; a long range is read in index order.) On PGlite always, and on PostgreSQL when
 * one answers. No planner settings are changed.
 */
import { createApiKeyGuard, createKeyring, createMemoryKeyStore } from '@keyset/core';
import { postgresUrl, uniqueSchema, createPglite } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app/create-app.ts';
import { orderPageQuery } from '../src/app/orders.ts';
import type { SqlClient } from '../src/db/database.ts';
import { migrateOrders, seedOrders } from '../src/db/orders-schema.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

const CASES = [
  ['status=cancelled', 'orders_status_created_at_id_idx'],
  ['status=cancelled&sort=amountCents', 'orders_status_amount_cents_id_idx'],
  ['status=cancelled&sort=-amountCents', 'orders_status_amount_cents_id_idx'],
  ['customer=cust_0042', 'orders_customer_created_at_id_idx'],
  ['customer=cust_0042&sort=-amountCents', 'orders_customer_amount_cents_id_idx'],
  ['customer=cust_0042&sort=id', 'orders_customer_id_idx'],
] as const;

function describeIndexes(name: string, open: () => Promise<{ db: SqlClient; close(): Promise<void> }>): void {
  describe(`filtered walks use the (filter, sort) indexes on ${name}`, () => {
    let db: SqlClient;
    let close: () => Promise<void>;
    let app: ReturnType<typeof createApp>;

    beforeAll(async () => {
      ({ db, close } = await open());
      await migrateOrders(db);
      await seedOrders(db, 20_000);
      const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
      app = createApp({ db, keyring, guard: createApiKeyGuard({ keyring }), cursorSecrets: ['order-filters-explain-secret-0123456789'] });
    }, 120_000);
    afterAll(() => close?.());

    it.each(CASES)('%s → %s, forward and backward, one index range', async (query, index) => {
      const paginator = app.paginators.orders;
      // A page in the middle: a cursor from the first page, then one back from the second.
      const first = await paginator.plan(new URLSearchParams(`${query}&limit=20`));
      const { rows } = await app.orders.list(first);
      const { body } = await paginator.page(first, rows, { url: `https://orders.test/api/orders?${query}&limit=20` });
      const next = (body as { nextCursor: string }).nextCursor;
      const second = await paginator.plan(new URLSearchParams(`${query}&limit=20&cursor=${next}`));
      const secondRows = (await app.orders.list(second)).rows;
      const back = (await paginator.page(second, secondRows, { url: `https://orders.test/api/orders?${query}&limit=20&cursor=${next}` })).body as { prevCursor: string };
      const backward = await paginator.plan(new URLSearchParams(`${query}&limit=20&cursor=${back.prevCursor}`));
      for (const plan of [second, backward]) {
        const q = orderPageQuery(plan);
        const { rows: explained } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
        const all = nodes(explained[0]!['QUERY PLAN'][0].Plan);
        const shape = JSON.stringify(all.map((n) => [n['Node Type'], n['Index Name'], n['Index Cond']]));
        const scan = all.find((n) => n['Index Name'] === index);
        expect(scan, shape).toBeDefined();
        // One range: the filter's equality and the cursor's row-value bound, both in the index condition.
        expect(scan!['Index Cond'], shape).toMatch(/\b(status|customer) = /);
        expect(scan!['Index Cond'], shape).toMatch(/ROW\(|\bid [<>] /);
        expect(all.some((n) => n['Node Type'] === 'Seq Scan'), shape).toBe(false);
      }
    });

    // The visibility map (what autovacuum keeps current on a live table) lets the key
    // subquery skip the heap; a freshly seeded table has none until it is vacuumed.
    it.each([
      ['', 'orders_created_at_id_idx'],
      ['status=cancelled', 'orders_status_created_at_id_idx'],
      ['customer=cust_0042&sort=-amountCents', 'orders_customer_amount_cents_id_idx'],
    ] as const)('offset page past the first row (%s): keys from %s alone, the page by primary key, no table scan', async (query, index) => {
      await db.query('VACUUM ANALYZE orders');
      const plan = await app.paginators.orders.plan(new URLSearchParams(`${query}&limit=20&offset=40`));
      const q = orderPageQuery(plan);
      const { rows: explained } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
      const all = nodes(explained[0]!['QUERY PLAN'][0].Plan);
      const shape = JSON.stringify(all.map((n) => [n['Node Type'], n['Index Name'], n['Index Cond']]));
      expect(all.find((n) => n['Index Name'] === index)?.['Node Type'], shape).toBe('Index Only Scan');
      expect(all.find((n) => n['Index Name'] === 'orders_pkey')?.['Node Type'], shape).toBe('Index Scan');
      expect(all.some((n) => n['Node Type'] === 'Seq Scan'), shape).toBe(false);
    });
  });
}

describeIndexes('PGlite', async () => {
  const lite = await createPglite();
  return { db: lite, close: () => lite.close() };
});

const url = await postgresUrl();
if (url !== undefined) {
  describeIndexes('PostgreSQL', async () => {
    const schema = uniqueSchema('orders_explain');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`SET search_path TO ${schema}`);
    return {
      db: client,
      close: async () => {
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      },
    };
  });
}
