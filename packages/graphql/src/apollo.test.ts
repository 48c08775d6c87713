/**
 * API keys for Apollo Server 5: `startStandaloneServer` with `apolloApiKeyContext()` over the
 * conformance fixture's guard and keys, and a Relay connection, called over HTTP with Node's fetch.
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { createConformanceFixture, type ConformanceFixture } from '@keyset/conformance';
import { createPaginator, paginateArray } from '@keyset/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apolloApiKeyContext, apolloFieldScopes, connection, connectionTypeDefs, planConnection, type ApiKeyContext, type ConnectionArgs } from './index.ts';

let fixture: ConformanceFixture;
let server: ApolloServer<ApiKeyContext>;
let url: string;
/** A second server: any valid key is admitted, scopes are declared per field and per operation type. */
let scoped: ApolloServer<ApiKeyContext>;
let scopedUrl: string;
let placed = 0;
let executed = 0;

const rows = Array.from({ length: 7 }, (_, i) => ({ id: i + 1 }));
const items = createPaginator<{ id: number }>({ endpoint: 'Query.items', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] } });

beforeAll(async () => {
  fixture = await createConformanceFixture();
  server = new ApolloServer<ApiKeyContext>({
    typeDefs: `type Item { id: Int! } ${connectionTypeDefs('Item')} type Query { whoami: String! items(first: Int, after: String, last: Int, before: String): ItemConnection! }`,
    resolvers: {
      Query: {
        whoami: (_: unknown, __: unknown, context: ApiKeyContext) => {
          executed++;
          return context.apiKey.name;
        },
        items: async (_: unknown, args: ConnectionArgs) => {
          const plan = await planConnection(items, args);
          return connection(items, plan, paginateArray(rows, plan, plan.sort).rows);
        },
      },
    },
  });
  ({ url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' }, context: apolloApiKeyContext({ guard: fixture.guard, scopes: ['items:read'] }) }));
  scoped = new ApolloServer<ApiKeyContext>({
    typeDefs: 'type Query { whoami: String! orders: [Int!]! } type Mutation { placeOrder: Int! }',
    resolvers: {
      Query: { whoami: (_: unknown, __: unknown, context: ApiKeyContext) => context.apiKey.name, orders: () => [1, 2] },
      Mutation: {
        placeOrder: () => {
          placed++;
          return 3;
        },
      },
    },
    plugins: [apolloFieldScopes({ fieldScopes: { 'Query.orders': ['items:read'], Mutation: ['items:write'] } })],
  });
  ({ url: scopedUrl } = await startStandaloneServer(scoped, { listen: { port: 0, host: '127.0.0.1' }, context: apolloApiKeyContext({ guard: fixture.guard }) }));
});
afterAll(async () => {
  await server?.stop();
  await scoped?.stop();
  await fixture?.close();
});

const post = (query: string, key?: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `ApiKey ${key}` }) }, body: JSON.stringify({ query }) });
type Body = { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };

describe('apolloApiKeyContext(): the guard in Apollo Server 5', () => {
  it('admits a valid key: the context holds it, the response carries the RateLimit headers', async () => {
    const res = await post('{ whoami }', fixture.keys.reader);
    expect(await res.json()).toEqual({ data: { whoami: 'reader' } });
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
  });

  it('refuses without executing: 401 with WWW-Authenticate, 403 insufficient_scope, 429 with Retry-After and RateLimit; codes in extensions, no key text', async () => {
    const before = executed;
    const missing = await post('{ whoami }');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    expect(((await missing.json()) as Body).errors![0]!.extensions?.code).toBe('missing_api_key');
    const writer = await post('{ whoami }', fixture.keys.writer);
    expect(writer.status).toBe(403);
    const text = await writer.text();
    expect((JSON.parse(text) as Body).errors![0]!.extensions).toMatchObject({ code: 'insufficient_scope', missing_scopes: ['items:read'] });
    expect(text).not.toContain(fixture.keys.writer.slice(-20));
    for (let i = 0; i < 2; i++) expect((await post('{ whoami }', fixture.keys.limited)).status).toBe(200);
    const limited = await post('{ whoami }', fixture.keys.limited);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit')).toMatch(/r=0/);
    expect(((await limited.json()) as Body).errors![0]!.extensions?.code).toBe('rate_limited');
    expect(executed).toBe(before + 2);
  });

  it('serves a Relay connection: last/before in sort order, a refused cursor as invalid_cursor', async () => {
    const tail = (await (await post('{ items(last: 2) { edges { cursor node { id } } pageInfo { startCursor hasPreviousPage } } }', fixture.keys.reader)).json()) as { data: { items: { edges: { node: { id: number } }[]; pageInfo: { startCursor: string; hasPreviousPage: boolean } } } };
    expect(tail.data.items.edges.map((e) => e.node.id)).toEqual([6, 7]);
    expect(tail.data.items.pageInfo.hasPreviousPage).toBe(true);
    const back = (await (await post(`{ items(last: 2, before: "${tail.data.items.pageInfo.startCursor}") { edges { node { id } } } }`, fixture.keys.reader)).json()) as { data: { items: { edges: { node: { id: number } }[] } } };
    expect(back.data.items.edges.map((e) => e.node.id)).toEqual([4, 5]);
    const bad = (await (await post('{ items(first: 2, after: "opaqueCursor") { edges { cursor } } }', fixture.keys.reader)).json()) as Body;
    expect(bad.errors![0]!.extensions?.code).toBe('invalid_cursor');
  });
});

describe('apolloFieldScopes(): scopes per field and per operation type in Apollo Server 5', () => {
  const send = async (query: string, key: string) => {
    const res = await fetch(scopedUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}` }, body: JSON.stringify({ query }) });
    return { status: res.status, body: (await res.json()) as Body };
  };

  it('a key without a field\'s scope: HTTP 403, one insufficient_scope error naming the missing scopes, fragments included, nothing run', async () => {
    const writerReads = await send('{ whoami ...F } fragment F on Query { orders }', fixture.keys.writer);
    expect(writerReads.status).toBe(403);
    expect(writerReads.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'insufficient_scope', missing_scopes: ['items:read'] } })]);
    expect(writerReads.body.data).toBeUndefined();
    const before = placed;
    const readerWrites = await send('mutation { placeOrder }', fixture.keys.reader);
    expect(readerWrites.status).toBe(403);
    expect(readerWrites.body.errors![0]!.extensions).toEqual({ code: 'insufficient_scope', missing_scopes: ['items:write'] });
    expect(placed).toBe(before);
  });

  it('a key holding the scopes is served; a field with no declared scope needs none', async () => {
    expect(await send('{ orders }', fixture.keys.reader)).toEqual({ status: 200, body: { data: { orders: [1, 2] } } });
    expect(await send('mutation { placeOrder }', fixture.keys.writer)).toEqual({ status: 200, body: { data: { placeOrder: 3 } } });
    expect(await send('{ whoami }', fixture.keys.writer)).toEqual({ status: 200, body: { data: { whoami: 'writer' } } });
  });

  it('a context without the key (apolloApiKeyContext not wired): 401 missing_api_key, never served', async () => {
    const bare = new ApolloServer({ typeDefs: 'type Query { orders: [Int!]! }', resolvers: { Query: { orders: () => [1] } }, plugins: [apolloFieldScopes({ fieldScopes: { 'Query.orders': ['items:read'] } })] });
    await bare.start();
    try {
      const res = await bare.executeOperation({ query: '{ orders }' });
      expect(res.http.status).toBe(401);
      expect(res.body.kind === 'single' && res.body.singleResult).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'missing_api_key' } })] });
    } finally {
      await bare.stop();
    }
  });
});
