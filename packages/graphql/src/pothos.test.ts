/**
 * A keyset connection declared with Pothos (code first, `@pothos/plugin-relay`'s
 * `t.connection`, whose resolver returns what `connection()` returns), served by a real
 * graphql-yoga server over HTTP behind `useApiKey()` with a scope on the field, called with
 * Node's fetch; and the same schema on Apollo Server 5. docs/graphql.md shows the same
 * declaration.
 */
import { createServer, type Server } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import type { AddressInfo } from 'node:net';
import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import { createConformanceFixture, type ConformanceFixture } from '@keyset/conformance';
import { createPaginator, paginateArray } from '@keyset/core';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apolloApiKeyContext, apolloFieldScopes, connection, planConnection, useApiKey, type ApiKeyContext } from './index.ts';

interface Order {
  id: number;
  createdAt: string;
  status: string;
}

// Newest first, three orders per minute: `id` breaks the ties.
const ROWS: Order[] = Array.from({ length: 23 }, (_, i) => ({
  id: i + 1,
  createdAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 3) * 60_000).toISOString(),
  status: i % 4 === 0 ? 'refunded' : 'paid',
}));
const NEWEST_FIRST = [...ROWS].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id).map((o) => o.id);

const orders = createPaginator<Order>({
  endpoint: 'Query.orders',
  sort: [
    { key: 'createdAt', dir: 'desc', type: 'timestamp' },
    { key: 'id', dir: 'desc', type: 'int', unique: true },
  ],
  limits: { default: 5, max: 10 },
  cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] },
});

let counted = 0;

function schema() {
  const builder = new SchemaBuilder<{ Context: ApiKeyContext; DefaultEdgesNullability: false; DefaultNodeNullability: false }>({
    plugins: [RelayPlugin],
    // Connections only: no global `node`/`nodes` fields.
    relay: { nodeQueryOptions: false, nodesQueryOptions: false, edgesFieldOptions: { nullable: false }, nodeFieldOptions: { nullable: false } },
  });
  const OrderRef = builder.objectRef<Order>('Order').implement({
    fields: (t) => ({ id: t.exposeInt('id'), createdAt: t.exposeString('createdAt'), status: t.exposeString('status') }),
  });
  builder.queryType({
    fields: (t) => ({
      whoami: t.string({ resolve: (_root, _args, context) => context.apiKey.name }),
      orders: t.connection(
        {
          type: OrderRef,
          args: { status: t.arg.string() },
          resolve: async (_root, args) => {
            const status = args.status ?? null;
            const matching = status === null ? ROWS : ROWS.filter((o) => o.status === status);
            const plan = await planConnection(orders, args, { filters: { status } });
            return connection(orders, plan, paginateArray(matching, plan, plan.sort).rows, {
              totalCount: () => {
                counted++;
                return matching.length;
              },
            });
          },
        },
        { fields: (c) => ({ totalCount: c.int({ resolve: (parent) => parent.totalCount!() }) }) },
      ),
    }),
  });
  return builder.toSchema();
}

let fixture: ConformanceFixture;
let server: Server;
let url: string;

beforeAll(async () => {
  fixture = await createConformanceFixture();
  const yoga = createYoga({ schema: schema(), logging: false, plugins: [useApiKey({ guard: fixture.guard, fieldScopes: { 'Query.orders': ['items:read'] } })] });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await fixture?.close();
});

interface Page {
  edges: { cursor: string; node: { id: number } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: number;
}
type Body = { data?: { orders?: Page; whoami?: string } | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

async function post(query: string, variables: Record<string, unknown> = {}, key = fixture.keys.reader): Promise<{ status: number; body: Body }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}` }, body: JSON.stringify({ query, variables }) });
  return { status: response.status, body: (await response.json()) as Body };
}
const QUERY = `query ($first: Int, $after: String, $last: Int, $before: String, $status: String) {
  orders(first: $first, after: $after, last: $last, before: $before, status: $status) {
    edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
async function page(args: Record<string, unknown>): Promise<Page> {
  const { status, body } = await post(QUERY, args);
  expect(body.errors).toBeUndefined();
  expect(status).toBe(200);
  return body.data!.orders!;
}
const ids = (p: Page) => p.edges.map((e) => e.node.id);

describe('a keyset connection declared with Pothos (plugin-relay t.connection), served by graphql-yoga over HTTP', () => {
  it('the schema has the connection types and arguments the specification names', async () => {
    const { body } = await post('{ __type(name: "QueryOrdersConnection") { fields { name type { kind ofType { name kind } } } } }');
    const fields = (body.data as unknown as { __type: { fields: { name: string; type: { kind: string; ofType: { name: string } | null } }[] } }).__type.fields;
    expect(fields.map((f) => f.name).sort()).toEqual(['edges', 'pageInfo', 'totalCount']);
    expect(fields.find((f) => f.name === 'pageInfo')?.type).toEqual({ kind: 'NON_NULL', ofType: { name: 'PageInfo', kind: 'OBJECT' } });
    const query = await post('{ __type(name: "Query") { fields { name args { name type { name } } } } }');
    const orders = (query.body.data as unknown as { __type: { fields: { name: string; args: { name: string; type: { name: string } }[] }[] } }).__type.fields.find((f) => f.name === 'orders');
    expect(Object.fromEntries(orders!.args.map((a) => [a.name, a.type.name]))).toEqual({ first: 'Int', after: 'String', last: 'Int', before: 'String', status: 'String' });
  });

  it('walks forward with first/after and back with last/before: every order once, edges in the sort order both ways', async () => {
    const forward: number[] = [];
    let p = await page({ first: 4 });
    expect(p.pageInfo.hasPreviousPage).toBe(false);
    forward.push(...ids(p));
    while (p.pageInfo.hasNextPage) {
      p = await page({ first: 4, after: p.pageInfo.endCursor });
      forward.push(...ids(p));
    }
    expect(forward).toEqual(NEWEST_FIRST);
    expect(p.pageInfo.endCursor).toBe(p.edges.at(-1)!.cursor);

    const backward: number[][] = [];
    p = await page({ last: 4 });
    expect(p.pageInfo.hasNextPage).toBe(false);
    backward.unshift(ids(p));
    while (p.pageInfo.hasPreviousPage) {
      p = await page({ last: 4, before: p.pageInfo.startCursor });
      backward.unshift(ids(p));
    }
    expect(backward.flat()).toEqual(NEWEST_FIRST);
    // `last: 4` is the four oldest, oldest last, as `first` would list them.
    expect(backward.at(-1)).toEqual(NEWEST_FIRST.slice(-4));
  });

  it('binds the field\'s filter into the cursors and counts only when totalCount is selected', async () => {
    const refunded = await page({ first: 2, status: 'refunded' });
    expect(ids(refunded).every((id) => ROWS[id - 1]!.status === 'refunded')).toBe(true);
    const crossed = await post(QUERY, { first: 2, after: refunded.pageInfo.endCursor, status: 'paid' });
    expect(crossed.body.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_cursor']);
    const before = counted;
    await page({ first: 1 });
    expect(counted).toBe(before);
    const { body } = await post('{ orders(first: 1, status: "refunded") { totalCount } }');
    expect(body.data?.orders?.totalCount).toBe(ROWS.filter((o) => o.status === 'refunded').length);
    expect(counted).toBe(before + 1);
  });

  it('refuses bad arguments with keyset\'s codes: limit_too_large with the maximum, invalid_limit, invalid_cursor', async () => {
    expect((await post(QUERY, { first: 11 })).body.errors?.[0]?.extensions).toMatchObject({ code: 'limit_too_large', max_limit: 10 });
    expect((await post(QUERY, { last: -1 })).body.errors?.[0]?.extensions?.code).toBe('invalid_limit');
    expect((await post(QUERY, { first: 2, after: 'opaqueCursor' })).body.errors?.[0]?.extensions?.code).toBe('invalid_cursor');
  });

  it('the scope declared on the field: a key without it gets HTTP 403 insufficient_scope and nothing runs; other fields stay open to it', async () => {
    const before = counted;
    const refused = await post('{ orders(first: 1) { totalCount } }', {}, fixture.keys.writer);
    expect(refused.status).toBe(403);
    expect(refused.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'insufficient_scope', missing_scopes: ['items:read'] } })]);
    expect(counted).toBe(before);
    expect((await post('{ whoami }', {}, fixture.keys.writer)).body).toEqual({ data: { whoami: 'writer' } });
  });
});

describe('the same Pothos schema on Apollo Server 5 (apolloApiKeyContext, apolloFieldScopes)', () => {
  it('serves the connection both ways and refuses a key without the field\'s scope with HTTP 403', async () => {
    const apollo = new ApolloServer<ApiKeyContext>({ schema: schema(), plugins: [apolloFieldScopes({ fieldScopes: { 'Query.orders': ['items:read'] } })] });
    const { url: apolloUrl } = await startStandaloneServer(apollo, { listen: { port: 0, host: '127.0.0.1' }, context: apolloApiKeyContext({ guard: fixture.guard }) });
    try {
      const send = async (query: string, variables: Record<string, unknown>, key: string) => {
        const res = await fetch(apolloUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}` }, body: JSON.stringify({ query, variables }) });
        return { status: res.status, body: (await res.json()) as Body };
      };
      const tail = await send(QUERY, { last: 3 }, fixture.keys.reader);
      expect(ids(tail.body.data!.orders!)).toEqual(NEWEST_FIRST.slice(-3));
      const before = await send(QUERY, { last: 3, before: tail.body.data!.orders!.pageInfo.startCursor }, fixture.keys.reader);
      expect(ids(before.body.data!.orders!)).toEqual(NEWEST_FIRST.slice(-6, -3));
      const refused = await send(QUERY, { first: 1 }, fixture.keys.writer);
      expect(refused.status).toBe(403);
      expect(refused.body.errors?.map((e) => e.extensions?.code)).toEqual(['insufficient_scope']);
    } finally {
      await apollo.stop();
    }
  });
});
