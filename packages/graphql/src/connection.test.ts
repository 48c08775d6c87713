/**
 * The Relay Cursor Connections specification's pagination algorithm, case by case, through
 * a real graphql-yoga server over HTTP with an SDL schema, over an in-memory array.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaginator, paginateArray } from '@keyset/core';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connection, connectionTypeDefs, planConnection, type ConnectionArgs } from './index.ts';

interface Order {
  id: number;
  status: string;
}

const ORDERS: Order[] = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, status: i % 2 === 0 ? 'paid' : 'open' }));
const SECRET = 'a-cursor-secret-of-at-least-32-characters!';
const paginatorFor = (endpoint: string) =>
  createPaginator<Order>({ endpoint, sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], limits: { default: 3, max: 5 }, cursor: { secrets: [SECRET] } });
const orders = paginatorFor('Query.orders');
const refunds = paginatorFor('Query.refunds');
let counted = 0;

const typeDefs = /* GraphQL */ `
  type Order { id: Int! status: String! }
  ${connectionTypeDefs('Order')}
  type Query {
    orders(first: Int, after: String, last: Int, before: String, status: String): OrderConnection!
    refunds(first: Int, after: String, last: Int, before: String): OrderConnection!
  }
`;
const resolvers = {
  Query: {
    orders: async (_: unknown, args: ConnectionArgs & { status?: string | null }) => {
      const status = args.status ?? null;
      const rows = status === null ? ORDERS : ORDERS.filter((o) => o.status === status);
      const plan = await planConnection(orders, args, { filters: { status } });
      return connection(orders, plan, paginateArray(rows, plan, plan.sort).rows, {
        totalCount: () => {
          counted++;
          return rows.length;
        },
      });
    },
    refunds: async (_: unknown, args: ConnectionArgs) => {
      const plan = await planConnection(refunds, args);
      return connection(refunds, plan, paginateArray(ORDERS, plan, plan.sort).rows);
    },
  },
};

let server: Server;
let url: string;
beforeAll(async () => {
  const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), logging: false });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

interface Page {
  edges: { cursor: string; node: { id: number } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: number;
}

async function post(query: string, variables: Record<string, unknown> = {}): Promise<{ data?: Record<string, Page> | null; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  expect(response.status).toBe(200);
  return (await response.json()) as never;
}

const FIELDS = 'edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
async function page(args: ConnectionArgs & { status?: string }, field = 'orders'): Promise<Page> {
  const body = await post(`query ($first: Int, $after: String, $last: Int, $before: String${field === 'orders' ? ', $status: String' : ''}) { page: ${field}(first: $first, after: $after, last: $last, before: $before${field === 'orders' ? ', status: $status' : ''}) { ${FIELDS} } }`, { ...args });
  expect(body.errors).toBeUndefined();
  return body.data!.page!;
}
async function refusal(args: Record<string, unknown>, field = 'orders'): Promise<{ message: string; extensions?: { code?: string } }> {
  const body = await post(`query ($first: Int, $after: String, $last: Int, $before: String) { page: ${field}(first: $first, after: $after, last: $last, before: $before) { ${FIELDS} } }`, args);
  expect(body.data ?? null).toBeNull();
  expect(body.errors).toHaveLength(1);
  return body.errors![0]!;
}
const ids = (p: Page) => p.edges.map((e) => e.node.id);

describe('Relay connections through graphql-yoga over HTTP: the specification\'s pagination algorithm', () => {
  it('first: the first N edges, hasNextPage when more exist, hasPreviousPage false; a cursor on every edge; start/end cursors are the first and last edge\'s', async () => {
    const p = await page({ first: 3 });
    expect(ids(p)).toEqual([1, 2, 3]);
    expect(p.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(new Set(p.edges.map((e) => e.cursor)).size).toBe(3);
    expect(p.pageInfo.startCursor).toBe(p.edges[0]!.cursor);
    expect(p.pageInfo.endCursor).toBe(p.edges[2]!.cursor);
  });

  it('first/after: the edges after the cursor; any edge\'s cursor works, not only endCursor', async () => {
    const p1 = await page({ first: 3 });
    expect(ids(await page({ first: 3, after: p1.pageInfo.endCursor! }))).toEqual([4, 5, 6]);
    expect(ids(await page({ first: 2, after: p1.edges[0]!.cursor }))).toEqual([2, 3]);
    const end = await page({ first: 3, after: (await page({ first: 5, after: (await page({ first: 2 })).pageInfo.endCursor! })).pageInfo.endCursor! });
    expect(ids(end)).toEqual([8, 9, 10]);
    expect(end.pageInfo.hasNextPage).toBe(false);
  });

  it('last: the last N edges, in the same (sort) order as first gives them; hasPreviousPage when more exist, hasNextPage false', async () => {
    const p = await page({ last: 3 });
    expect(ids(p)).toEqual([8, 9, 10]);
    expect(p.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(p.pageInfo.startCursor).toBe(p.edges[0]!.cursor);
  });

  it('last/before: the edges just before the cursor, in sort order; at the start hasPreviousPage is false', async () => {
    const tail = await page({ last: 3 });
    const p = await page({ last: 3, before: tail.pageInfo.startCursor! });
    expect(ids(p)).toEqual([5, 6, 7]);
    const head = await page({ last: 5, before: p.edges[1]!.cursor });
    expect(ids(head)).toEqual([1, 2, 3, 4, 5]);
    expect(head.pageInfo.hasPreviousPage).toBe(false);
  });

  it('an edge\'s cursor is usable as after and as before (forward from it, back from it)', async () => {
    const middle = (await page({ first: 5 })).edges[4]!.cursor; // id 5
    expect(ids(await page({ first: 2, after: middle }))).toEqual([6, 7]);
    expect(ids(await page({ last: 2, before: middle }))).toEqual([3, 4]);
  });

  it('after and before together: only the edges between them; first counts from after, last from before', async () => {
    const all = (await page({ first: 5 })).edges;
    const after = all[0]!.cursor; // id 1
    const before = all[4]!.cursor; // id 5
    const between = await page({ first: 5, after, before });
    expect(ids(between)).toEqual([2, 3, 4]);
    expect(between.pageInfo.hasNextPage).toBe(false);
    const cut = await page({ first: 2, after, before });
    expect(ids(cut)).toEqual([2, 3]);
    expect(cut.pageInfo.hasNextPage).toBe(true);
    const back = await page({ last: 2, after, before });
    expect(ids(back)).toEqual([3, 4]);
    expect(back.pageInfo.hasPreviousPage).toBe(true);
    expect((await page({ last: 3, after, before })).pageInfo.hasPreviousPage).toBe(false);
  });

  it('first and last together: the last `last` of the first `first` edges; hasPreviousPage when more than `last` edges are left after the cursors', async () => {
    const p = await page({ first: 4, last: 2 });
    expect(ids(p)).toEqual([3, 4]);
    expect(p.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: true, startCursor: p.edges[0]!.cursor, endCursor: p.edges[1]!.cursor });
    const wide = await page({ first: 2, last: 5 });
    expect(ids(wide)).toEqual([1, 2]);
    expect(wide.pageInfo.hasPreviousPage).toBe(true); // 10 edges > last: 5
  });

  it('an empty connection has no edges, null start and end cursors, and no next or previous page', async () => {
    const last = (await page({ last: 1 })).pageInfo.endCursor!;
    expect(await page({ first: 3, after: last })).toEqual({ edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
    const zero = await page({ first: 0 });
    expect(zero.edges).toEqual([]);
    expect(zero.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null });
  });

  it('neither first nor last: the first page at the default size, with a truthful hasNextPage', async () => {
    const p = await page({});
    expect(ids(p)).toEqual([1, 2, 3]);
    expect(p.pageInfo.hasNextPage).toBe(true);
  });

  it('totalCount is counted only when a query selects it', async () => {
    const before = counted;
    await page({ first: 2 });
    expect(counted).toBe(before);
    const body = await post('{ orders(first: 2, status: "paid") { totalCount edges { node { id } } } }');
    expect(body.data!.orders).toEqual({ totalCount: 5, edges: [{ node: { id: 1 } }, { node: { id: 3 } }] });
    expect(counted).toBe(before + 1);
  });
});

describe('Relay connections: refusals are GraphQL errors with keyset\'s problem codes', () => {
  it('negative first or last: invalid_limit (the specification: "throw an error")', async () => {
    expect((await refusal({ first: -1 })).extensions?.code).toBe('invalid_limit');
    expect((await refusal({ last: -2 })).extensions?.code).toBe('invalid_limit');
  });

  it('a count over the maximum: limit_too_large with the maximum', async () => {
    const error = await refusal({ first: 6 });
    expect(error.extensions).toMatchObject({ code: 'limit_too_large', max_limit: 5 });
  });

  it('a cursor from another field, from the same field under other filters, tampered with or not a cursor: invalid_cursor, never a restart', async () => {
    const fromRefunds = (await page({ first: 2 }, 'refunds')).pageInfo.endCursor!;
    expect((await refusal({ first: 2, after: fromRefunds })).extensions?.code).toBe('invalid_cursor');
    const paid = (await page({ first: 2, status: 'paid' })).pageInfo.endCursor!;
    expect((await refusal({ first: 2, after: paid })).extensions?.code).toBe('invalid_cursor');
    expect((await refusal({ last: 2, before: paid })).extensions?.code).toBe('invalid_cursor');
    const own = (await page({ first: 2 })).pageInfo.endCursor!;
    const tampered = own.slice(0, -2) + (own.endsWith('AA') ? 'BB' : 'AA');
    expect((await refusal({ first: 2, after: tampered })).extensions?.code).toBe('invalid_cursor');
    expect((await refusal({ first: 2, after: 'opaqueCursor' })).extensions?.code).toBe('invalid_cursor');
    expect((await refusal({ first: 2, after: '' })).extensions?.code).toBe('invalid_cursor');
  });
});
