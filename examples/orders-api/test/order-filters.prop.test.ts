/**
 * Properties of `GET /api/orders`'s app layer (the orders paginator and handler, the SQL
 * the servers run) on PGlite and on PostgreSQL (skips when none answers): for random
 * orders (ties in `created_at` and `amount_cents`), a random filter (statuses, customer),
 * a random client sort and page size, the cursor walk forward visits exactly the matching
 * orders in order, no gap, no duplicate; walking back from the last page visits the same
 * pages reversed; the offset walk agrees, and its total (in a random total mode) is exact
 * where it claims to be and never contradicts the pages.
 */
import { PGlite } from '@electric-sql/pglite';
import { createApiKeyGuard, createKeyring, createMemoryKeyStore, type CursorPage, type OffsetPage, type TotalOption } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app/create-app.ts';
import { ORDER_STATUSES } from '../src/app/order-filters.ts';
import type { Order } from '../src/app/orders.ts';
import type { SqlClient } from '../src/db/database.ts';
import { migrateOrders } from '../src/db/orders-schema.ts';

const CUSTOMERS = ['cust_a', 'cust_b', 'cust_c'] as const;
const SORTS = ['-createdAt', 'createdAt', 'amountCents', '-amountCents', 'id', '-id', 'amountCents,-id', '-createdAt,id'] as const;
const TOTALS: readonly TotalOption[] = ['exact', 'estimated', 'none', { mode: 'exact', cap: 5 }];

interface Seeded {
  id: number;
  /** Microseconds after a fixed instant: few distinct values, so many ties. */
  micros: number;
  amount: number;
  status: (typeof ORDER_STATUSES)[number];
  customer: (typeof CUSTOMERS)[number];
}

const ordersArbitrary = fc
  .array(
    fc.record({
      micros: fc.integer({ min: 0, max: 6 }),
      amount: fc.integer({ min: 0, max: 4 }),
      status: fc.constantFrom(...ORDER_STATUSES),
      customer: fc.constantFrom(...CUSTOMERS),
    }),
    { maxLength: 50 },
  )
  .map((rows) => rows.map((row, i): Seeded => ({ id: i + 1, ...row })));

const filterArbitrary = fc.record({
  status: fc.subarray([...ORDER_STATUSES]),
  customer: fc.option(fc.constantFrom(...CUSTOMERS), { nil: undefined }),
  statusOrder: fc.boolean(),
});

async function reset(db: SqlClient, rows: readonly Seeded[]): Promise<void> {
  await db.query('DELETE FROM orders');
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO orders (id, created_at, customer, amount_cents, currency, status)
     SELECT id, timestamptz '2025-03-01 12:00:00+00' + micros * interval '1 microsecond', customer, amount, 'EUR', status
     FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[]) AS t(id, micros, customer, amount, status)`,
    [rows.map((r) => r.id), rows.map((r) => r.micros), rows.map((r) => r.customer), rows.map((r) => r.amount), rows.map((r) => r.status)],
  );
}

/** The reference order of a `sort` parameter (the tie-breaker `id` follows the last field given). */
function compareBy(sort: string): (a: Seeded, b: Seeded) => number {
  const fields = sort.split(',').map((f) => ({ name: f.replace(/^-/, ''), sign: f.startsWith('-') ? -1 : 1 }));
  if (!fields.some((f) => f.name === 'id')) fields.push({ name: 'id', sign: fields.at(-1)!.sign });
  const value = (row: Seeded, name: string): number => (name === 'createdAt' ? row.micros : name === 'amountCents' ? row.amount : row.id);
  return (a, b) => {
    for (const { name, sign } of fields) {
      const d = value(a, name) - value(b, name);
      if (d !== 0) return sign * d;
    }
    return 0;
  };
}

function walkProperty(db: () => SqlClient, numRuns: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      ordersArbitrary,
      filterArbitrary,
      fc.constantFrom(...SORTS),
      fc.integer({ min: 1, max: 7 }),
      fc.constantFrom(...TOTALS),
      async (rows, filter, sort, limit, ordersTotal) => {
        await reset(db(), rows);
        const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
        const app = createApp({ db: db(), keyring, guard: createApiKeyGuard({ keyring }), cursorSecrets: ['order-filters-property-secret-0123456789'], ordersTotal });
        const paginator = app.paginators.orders;
        const statuses = filter.statusOrder ? filter.status : [...filter.status].reverse();
        const expected = rows
          .filter((r) => (filter.status.length === 0 || filter.status.includes(r.status)) && (filter.customer === undefined || r.customer === filter.customer))
          .sort(compareBy(sort))
          .map((r) => r.id);
        const query = (extra: Record<string, string>): URLSearchParams => {
          const q = new URLSearchParams();
          for (const s of statuses) q.append('status', s);
          if (filter.customer !== undefined) q.set('customer', filter.customer);
          q.set('sort', sort);
          q.set('limit', String(limit));
          for (const [k, v] of Object.entries(extra)) q.set(k, v);
          return q;
        };
        const fetchPage = async (extra: Record<string, string>) => {
          const q = query(extra);
          const plan = await paginator.plan(q);
          const { rows: fetched, total } = await app.orders.list(plan);
          const url = `https://orders.test/api/orders?${q}`;
          return (await paginator.page(plan, fetched, total === undefined ? { url } : { url, total })).body;
        };

        // Forward by nextCursor.
        const forward: number[][] = [];
        let page = (await fetchPage({})) as CursorPage<Order>;
        for (;;) {
          forward.push(page.items.map((o) => o.id));
          if (page.nextCursor === null) break;
          expect(forward.length).toBeLessThanOrEqual(expected.length + 1);
          page = (await fetchPage({ cursor: page.nextCursor })) as CursorPage<Order>;
        }
        expect(forward.flat()).toEqual(expected);
        // Back from the last page by prevCursor: the same pages, reversed.
        const back: number[][] = [];
        while (page.prevCursor !== null) {
          page = (await fetchPage({ cursor: page.prevCursor })) as CursorPage<Order>;
          back.push(page.items.map((o) => o.id));
          expect(back.length).toBeLessThanOrEqual(forward.length);
        }
        expect(back).toEqual(forward.slice(0, -1).reverse());

        // Offset walk: the same rows; the total is exact where unflagged, and never below what a page proves.
        const byOffset: number[] = [];
        for (let offset = 0; ; offset += limit) {
          const body = (await fetchPage({ offset: String(offset) })) as OffsetPage<Order>;
          byOffset.push(...body.items.map((o) => o.id));
          const more = offset + limit < expected.length;
          if (ordersTotal === 'none') expect(body.total).toBeNull();
          else if (body.totalEstimated !== true && body.totalAtLeast !== true) expect(body.total).toBe(expected.length);
          else expect(body.total!).toBeGreaterThanOrEqual(offset + body.items.length + (more ? 1 : 0));
          if (ordersTotal === 'exact') expect(body).toEqual({ items: body.items, total: expected.length });
          if (!more) {
            if (ordersTotal !== 'none' && (expected.length > 0 || offset === 0)) expect(body.total).toBe(expected.length);
            break;
          }
        }
        expect(byOffset).toEqual(expected);
      },
    ),
    { numRuns },
  );
}

describe('orders filters, sorts and totals on PGlite', () => {
  let lite: PGlite;
  beforeAll(async () => {
    lite = await PGlite.create();
    await migrateOrders(lite);
  }, 60_000);
  afterAll(() => lite?.close());

  it('filtered walks forward and back: every matching order once, no gap, no duplicate; offset and totals agree', () => walkProperty(() => lite, 100), 120_000);
});

const url = await postgresUrl();

describe.skipIf(url === undefined)('orders filters, sorts and totals on PostgreSQL', () => {
  const schema = uniqueSchema('orders_filters');
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`SET search_path TO ${schema}`);
    await migrateOrders(client);
  }, 60_000);
  afterAll(async () => {
    await client?.query(`DROP SCHEMA ${schema} CASCADE`);
    await client?.end();
  });

  it('filtered walks forward and back: every matching order once, no gap, no duplicate; offset and totals agree', () => walkProperty(() => client, 100), 120_000);
});
