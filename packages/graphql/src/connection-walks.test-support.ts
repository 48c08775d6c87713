/**
 * The connection walk over PostgreSQL (a server, or PGlite): a real graphql-yoga server
 * over HTTP whose `orders` connection runs `keysetWhere` on the database, and a client
 * walking it forward (first/after) or backward (last/before) while rows are inserted and
 * deleted between its pages. Microsecond timestamps sharing their millisecond, NULLs, ids
 * past 2^53 and mixed directions in the sort, so the cursor carries every hard value.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaginator, keysetWhere, type SortKey } from '@keyset/core';
import fc from 'fast-check';
import { createSchema, createYoga } from 'graphql-yoga';
import { expect } from 'vitest';
import { connection, connectionTypeDefs, planConnection, type ConnectionArgs } from './index.ts';

/** What both a `pg.Pool` and PGlite offer. */
export interface Queryable {
  query<Row>(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
}

interface Order {
  id: string;
  createdAt: string;
  label: string | null;
}

export const ORDERS_DDL = 'CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, label text)';

// Newest first, then label (NULLs first), then id descending: mixed directions, ties on
// the leading keys everywhere, the unique id breaking them.
const SORT = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'label', dir: 'asc', type: 'string', nullable: { nulls: 'first' } },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
] as const satisfies readonly SortKey[];
const LABELS = [null, 'a', 'b'];
/** Ids start past 2^53: a double would merge neighbours. */
const ID_BASE = 2n ** 53n;

const orders = createPaginator<Order>({ endpoint: 'Query.orders', sort: SORT, limits: { max: 50 }, cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] } });

/** The sort order, spelled out independently of the library. */
function reference(a: Order, b: Order): number {
  const rank = (l: string | null) => (l === null ? -1 : LABELS.indexOf(l));
  return b.createdAt.localeCompare(a.createdAt) || rank(a.label) - rank(b.label) || (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0);
}

/** Starts the GraphQL server over `db` (whose `orders` table exists). */
export async function startOrdersServer(db: Queryable): Promise<{ url: string; close(): Promise<void> }> {
  const typeDefs = `type Order { id: String! createdAt: String! label: String } ${connectionTypeDefs('Order')}
    type Query { orders(first: Int, after: String, last: Int, before: String): OrderConnection! }`;
  const resolvers = {
    Query: {
      orders: async (_: unknown, args: ConnectionArgs) => {
        const plan = await planConnection(orders, args);
        const k = keysetWhere(plan, plan.sort, 'postgres');
        // The exact values: microseconds (a JS Date holds milliseconds) and ids as text.
        const { rows } = await db.query<Order>(
          `SELECT id::text AS id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "createdAt", label
             FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit} OFFSET ${k.offset}`,
          k.params,
        );
        return connection(orders, plan, rows);
      },
    },
  };
  const server: Server = createServer(createYoga({ schema: createSchema({ typeDefs, resolvers }), logging: false }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Page {
  edges: { cursor: string; node: Order }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

async function page(url: string, args: ConnectionArgs): Promise<Page> {
  const query = 'query ($first: Int, $after: String, $last: Int, $before: String) { orders(first: $first, after: $after, last: $last, before: $before) { edges { cursor node { id createdAt label } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }';
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: args }) });
  const body = (await response.json()) as { data?: { orders: Page }; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  expect(response.status).toBe(200);
  return body.data!.orders;
}

/** A row to insert: its millisecond (of 4) and microsecond (of 3) inside it, and its label. */
const rowArb = fc.record({ ms: fc.integer({ min: 0, max: 3 }), us: fc.integer({ min: 0, max: 2 }), label: fc.constantFrom(...LABELS) });
type NewRow = { ms: number; us: number; label: string | null };
const writeArb = fc.record({ inserts: fc.array(rowArb, { maxLength: 3 }), deletes: fc.array(fc.nat(), { maxLength: 3 }) });

/** The walk's arguments: the rows at the start, the page size, the writes after each of the first pages. */
export const walkArbs = [fc.array(rowArb, { maxLength: 25 }), fc.integer({ min: 1, max: 6 }), fc.array(writeArb, { maxLength: 6 })] as const;

/**
 * Walks the connection one way with `writes` applied between pages (through `db`, as
 * another client would): every row present throughout appears exactly once, no row twice,
 * edges in the sort order on every page and across them, cursors as the algorithm states.
 */
export async function walk(db: Queryable, url: string, direction: 'forward' | 'backward', initial: NewRow[], size: number, writes: { inserts: NewRow[]; deletes: number[] }[]): Promise<void> {
  await db.query('DELETE FROM orders');
  let next = 1n;
  const insert = async (rows: NewRow[]) => {
    if (rows.length === 0) return;
    const ids = rows.map(() => String(ID_BASE + next++));
    await db.query(
      `INSERT INTO orders SELECT id, timestamptz '2025-01-01 00:00:00+00' + ms * interval '1 millisecond' + us * interval '1 microsecond', label
         FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[]) AS t(id, ms, us, label)`,
      [ids, rows.map((r) => r.ms), rows.map((r) => r.us), rows.map((r) => r.label)],
    );
  };
  await insert(initial);
  const start = (await db.query<{ id: string }>('SELECT id::text AS id FROM orders')).rows.map((r) => r.id);
  const deleted = new Set<string>();
  const seen: Order[] = [];
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    const p: Page = direction === 'forward' ? await page(url, { first: size, after: cursor }) : await page(url, { last: size, before: cursor });
    const nodes = p.edges.map((e) => e.node);
    expect(nodes.length).toBeLessThanOrEqual(size);
    expect(p.pageInfo.startCursor).toBe(p.edges[0]?.cursor ?? null);
    expect(p.pageInfo.endCursor).toBe(p.edges.at(-1)?.cursor ?? null);
    if (direction === 'forward') seen.push(...nodes);
    else seen.unshift(...nodes);
    const more = direction === 'forward' ? p.pageInfo.hasNextPage : p.pageInfo.hasPreviousPage;
    if (!more) break;
    cursor = (direction === 'forward' ? p.pageInfo.endCursor : p.pageInfo.startCursor)!;
    // Writes between the first pages only: a walk that met an insert past its end on
    // every page would never end.
    const w = writes[i];
    if (w !== undefined) {
      await insert(w.inserts);
      const present = (await db.query<{ id: string }>('SELECT id::text AS id FROM orders ORDER BY id')).rows;
      for (const d of w.deletes) {
        if (present.length === 0) break;
        const [gone] = present.splice(d % present.length, 1);
        await db.query('DELETE FROM orders WHERE id = $1', [gone!.id]);
        deleted.add(gone!.id);
      }
    }
    expect(i).toBeLessThan(1000);
  }
  const ids = seen.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...seen].sort(reference)).toEqual(seen);
  const got = new Set(ids);
  expect(start.filter((id) => !deleted.has(id) && !got.has(id))).toEqual([]);
}
