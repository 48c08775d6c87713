/**
 * Properties of `GET /api/orders`'s app layer (the orders paginator and handler, the SQL
 * the servers run) on PGlite and on PostgreSQL (skips when none answers): for random
 * orders (ties in `created_at` and `amount_cents`), a random filter (statuses, customer),
 * a random client sort and page size, the cursor walk forward visits exactly the matching
 * orders in order, no gap, no duplicate; walking back from the last page visits the same
 * pages reversed; the offset walk agrees, and its total (in a random total mode) is exact
 * where it claims to be and never contradicts the pages. With inserts and deletes between
 * pages, every matching order present for a whole walk appears once in each direction.
 * And an offset page (a deferred join past the first row) equals the plain OFFSET query's
 * page, row for row, for random filters, sorts, page sizes and offsets.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createApiKeyGuard, createKeyring, createMemoryKeyStore, keysetWhere, type CursorPage, type OffsetPage, type TotalOption } from '@keyset/core';
import { postgresUrl, uniqueSchema, createPglite } from '@keyset/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app/create-app.ts';
import { ORDER_STATUSES, orderFilterSql, type OrderFilters } from '../src/app/order-filters.ts';
import { orderPageQuery, type Order } from '../src/app/orders.ts';
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
    { maxLength: 50, size: 'medium' },
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

const mutationsArbitrary = fc.array(
  fc.record({
    inserts: fc.array(
      fc.record({
        micros: fc.integer({ min: 0, max: 6 }),
        amount: fc.integer({ min: 0, max: 4 }),
        status: fc.constantFrom(...ORDER_STATUSES),
        customer: fc.constantFrom(...CUSTOMERS),
      }),
      { maxLength: 3 },
    ),
    deletes: fc.array(fc.nat(), { maxLength: 3 }),
  }),
  { maxLength: 40 },
);

/**
 * Inserts and deletes between every two pages, forward by nextCursor and then back by
 * prevCursor: every matching order present for the whole walk appears exactly once, nothing
 * appears twice, everything shown matches the filter, in the sort's order.
 */
function concurrentWalkProperty(db: () => SqlClient, numRuns: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      ordersArbitrary,
      filterArbitrary,
      fc.constantFrom(...SORTS),
      fc.integer({ min: 1, max: 5 }),
      mutationsArbitrary,
      mutationsArbitrary,
      async (rows, filter, sort, limit, forwardMutations, backwardMutations) => {
        await reset(db(), rows);
        const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
        const app = createApp({ db: db(), keyring, guard: createApiKeyGuard({ keyring }), cursorSecrets: ['order-filters-property-secret-0123456789'] });
        const paginator = app.paginators.orders;
        const byId = new Map(rows.map((r) => [r.id, r]));
        let nextId = rows.length + 1;
        const matches = (r: Seeded): boolean =>
          (filter.status.length === 0 || filter.status.includes(r.status)) && (filter.customer === undefined || r.customer === filter.customer);
        const compare = compareBy(sort);
        const fetchPage = async (cursor: string | null): Promise<CursorPage<Order>> => {
          const q = new URLSearchParams();
          for (const s of filter.status) q.append('status', s);
          if (filter.customer !== undefined) q.set('customer', filter.customer);
          q.set('sort', sort);
          q.set('limit', String(limit));
          if (cursor !== null) q.set('cursor', cursor);
          const plan = await paginator.plan(q);
          const { rows: fetched } = await app.orders.list(plan);
          return (await paginator.page(plan, fetched, { url: `https://orders.test/api/orders?${q}` })).body as CursorPage<Order>;
        };
        const mutate = async (m: (typeof forwardMutations)[number] | undefined, gone: Set<number>): Promise<void> => {
          if (m === undefined) return;
          const live = [...byId.keys()];
          for (const d of m.deletes) {
            const id = live[d % Math.max(1, live.length)];
            if (id === undefined || !byId.has(id)) continue;
            await db().query('DELETE FROM orders WHERE id = $1', [id]);
            byId.delete(id);
            gone.add(id);
          }
          const added = m.inserts.map((r): Seeded => ({ id: nextId++, ...r }));
          if (added.length > 0) {
            await db().query(
              `INSERT INTO orders (id, created_at, customer, amount_cents, currency, status)
               SELECT id, timestamptz '2025-03-01 12:00:00+00' + micros * interval '1 microsecond', customer, amount, 'EUR', status
               FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bigint[], $5::text[]) AS t(id, micros, customer, amount, status)`,
              [added.map((r) => r.id), added.map((r) => r.micros), added.map((r) => r.customer), added.map((r) => r.amount), added.map((r) => r.status)],
            );
            for (const r of added) byId.set(r.id, r);
          }
        };
        /** Checks one walk: `seen` in walk order, `throughout` the ids present from its start to its end. */
        const check = (seen: number[], throughout: Set<number>, direction: 1 | -1, all: Map<number, Seeded>): void => {
          expect(new Set(seen).size, `duplicates in ${seen}`).toBe(seen.length);
          for (const id of seen) expect(matches(all.get(id)!), `order ${id} does not match the filter`).toBe(true);
          for (const id of throughout) if (matches(all.get(id)!)) expect(seen, `order ${id} present throughout is missing`).toContain(id);
          for (let i = 1; i < seen.length; i++) expect(direction * compare(all.get(seen[i - 1]!)!, all.get(seen[i]!)!)).toBeLessThan(0);
        };
        const everyRow = new Map(byId);

        // Forward, mutating between pages.
        let gone = new Set<number>();
        let throughout = new Set(byId.keys());
        const forward: number[] = [];
        let lastPage: number[] = [];
        let page = await fetchPage(null);
        for (let i = 0; ; i++) {
          forward.push(...page.items.map((o) => o.id));
          lastPage = page.items.map((o) => o.id);
          if (page.nextCursor === null) break;
          expect(i).toBeLessThan(400);
          await mutate(forwardMutations[i], gone);
          for (const [id, r] of byId) everyRow.set(id, r);
          page = await fetchPage(page.nextCursor);
        }
        for (const id of gone) throughout.delete(id);
        check(forward, throughout, 1, everyRow);

        // Back from the last page, mutating between pages.
        gone = new Set<number>();
        throughout = new Set(byId.keys());
        const backward: number[] = [];
        for (let i = 0; page.prevCursor !== null; i++) {
          expect(i).toBeLessThan(400);
          await mutate(backwardMutations[i], gone);
          for (const [id, r] of byId) everyRow.set(id, r);
          page = await fetchPage(page.prevCursor);
          backward.push(...page.items.map((o) => o.id).reverse());
        }
        // The walk back starts at the last page (already read): what lies before its first row.
        for (const id of gone) throughout.delete(id);
        for (const id of lastPage) throughout.delete(id);
        check(backward, throughout, -1, everyRow);
      },
    ),
    { numRuns },
  );
}

/** `orderPageQuery`'s offset pages against the plain `ORDER BY … LIMIT … OFFSET` query, same columns. */
function deferredOffsetProperty(db: () => SqlClient, numRuns: number): Promise<void> {
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_test' });
  const app = createApp({ db: db(), keyring, guard: createApiKeyGuard({ keyring }), cursorSecrets: ['order-filters-property-secret-0123456789'] });
  return fc.assert(
    fc.asyncProperty(ordersArbitrary, filterArbitrary, fc.constantFrom(...SORTS), fc.integer({ min: 1, max: 7 }), fc.array(fc.nat({ max: 55 }), { minLength: 1, maxLength: 4 }), async (rows, filter, sort, limit, offsets) => {
      await reset(db(), rows);
      for (const offset of offsets) {
        const q = new URLSearchParams({ sort, limit: String(limit), offset: String(offset) });
        for (const s of filter.status) q.append('status', s);
        if (filter.customer !== undefined) q.set('customer', filter.customer);
        const plan = await app.paginators.orders.plan(q);
        const deferred = orderPageQuery(plan);
        const where = orderFilterSql(plan.filters as OrderFilters | undefined);
        const k = keysetWhere(plan, plan.sort, 'postgres', { paramOffset: where.params.length });
        const plain = await db().query(
          `SELECT id::text AS order_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_iso,
                  customer, amount_cents::text AS amount_text, currency, status
             FROM orders WHERE ${where.where} AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit} OFFSET ${k.offset}`,
          [...where.params, ...k.params],
        );
        if (offset > 0) expect(deferred.sql).toMatch(/ JOIN \(SELECT id AS page_id /);
        expect((await db().query(deferred.sql, deferred.params)).rows).toEqual(plain.rows);
      }
    }),
    { numRuns },
  );
}

describe('orders filters, sorts and totals on PGlite', () => {
  let lite: PGlite;
  beforeAll(async () => {
    lite = await createPglite();
    await migrateOrders(lite);
  }, 60_000);
  afterAll(() => lite?.close());

  it('filtered walks forward and back: every matching order once, no gap, no duplicate; offset and totals agree', () => walkProperty(() => lite, 100), 120_000);
  it('with inserts and deletes between pages, filtered walks forward and back show every order present throughout once', () => concurrentWalkProperty(() => lite, 60), 120_000);
  it('an offset page (a deferred join past the first row) equals the plain OFFSET query\'s, row for row', () => deferredOffsetProperty(() => lite, 60), 120_000);
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
  it('with inserts and deletes between pages, filtered walks forward and back show every order present throughout once', () => concurrentWalkProperty(() => client, 60), 120_000);
  it('an offset page (a deferred join past the first row) equals the plain OFFSET query\'s, row for row', () => deferredOffsetProperty(() => client, 60), 120_000);
});
