/**
 * API keys for GraphQL over HTTP: a real graphql-yoga server (Node http, SDL schema) with
 * `useApiKey()` over the conformance fixture's guard and keys, called with Node's fetch.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConformanceFixture, type ConformanceFixture } from '@keyset/conformance';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApiKey, type ApiKeyContext } from './index.ts';

let fixture: ConformanceFixture;
let server: Server;
let url: string;
let executed = 0;

const typeDefs = /* GraphQL */ `
  type Query { whoami: String! orders: [Int!]! }
  type Mutation { placeOrder: Int! }
`;
const resolvers = {
  Query: {
    whoami: (_: unknown, __: unknown, context: ApiKeyContext) => {
      executed++;
      return context.apiKey.name;
    },
    orders: () => [1, 2],
  },
  Mutation: { placeOrder: () => 3 },
};

beforeAll(async () => {
  fixture = await createConformanceFixture();
  const yoga = createYoga({
    schema: createSchema({ typeDefs, resolvers }),
    logging: false,
    batching: true,
    plugins: [useApiKey({ guard: fixture.guard, fieldScopes: { 'Query.orders': ['items:read'], Mutation: ['items:write'] } })],
  });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await fixture?.close();
});

const post = (query: string, key?: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `ApiKey ${key}` }), ...headers }, body: JSON.stringify({ query }) });
type Body = { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

describe('useApiKey(): the guard in a graphql-yoga server', () => {
  it('admits a valid key: the resolvers read it from the context, the response carries the RateLimit headers', async () => {
    const res = await post('{ whoami }', fixture.keys.reader);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { whoami: 'reader' } });
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toEqual(expect.any(String));
  });

  it('refuses a request without a key before executing it: HTTP 401 with WWW-Authenticate, one error coded missing_api_key', async () => {
    const before = executed;
    const res = await post('{ whoami }');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    const body = (await res.json()) as Body;
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.extensions?.code).toBe('missing_api_key');
    expect(executed).toBe(before);
  });

  it('puts no key text in any error: an unknown key, a key of another keyring, a key outside its IP allowlist', async () => {
    const unknown = fixture.keys.reader.slice(0, -4) + (fixture.keys.reader.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const [key, code] of [[unknown, 'invalid_api_key'], [fixture.foreignKey, 'invalid_api_key'], [fixture.keys.elsewhere, 'ip_not_allowed']] as const) {
      const res = await post('{ whoami }', key);
      const text = await res.text();
      expect([res.status, (JSON.parse(text) as Body).errors![0]!.extensions?.code]).toEqual([code === 'ip_not_allowed' ? 403 : 401, code]);
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(-20));
      expect(JSON.stringify([...res.headers])).not.toContain(key.slice(-20));
    }
  });

  it('answers over the rate limit with HTTP 429, Retry-After and the RateLimit headers REST sends, without executing', async () => {
    for (let i = 0; i < 2; i++) expect((await post('{ whoami }', fixture.keys.limited)).status).toBe(200);
    const before = executed;
    const res = await post('{ whoami }', fixture.keys.limited, { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('ratelimit')).toMatch(/r=0/);
    expect(res.headers.get('ratelimit-policy')).toMatch(/q=2/);
    expect(((await res.json()) as Body).errors![0]!.extensions?.code).toBe('rate_limited');
    expect(executed).toBe(before);
  });

  it('scopes per field and per operation type: a key without them gets one insufficient_scope error naming the missing scopes, fragments included', async () => {
    const writerReads = await post('{ whoami ...F } fragment F on Query { orders }', fixture.keys.writer);
    expect(((await writerReads.json()) as Body).errors).toEqual([expect.objectContaining({ extensions: { code: 'insufficient_scope', missing_scopes: ['items:read'] } })]);
    expect(writerReads.status).toBe(403);
    const readerWrites = await post('mutation { placeOrder }', fixture.keys.reader);
    expect(((await readerWrites.json()) as Body).errors![0]!.extensions).toEqual({ code: 'insufficient_scope', missing_scopes: ['items:write'] });
    expect(await (await post('{ orders }', fixture.keys.reader)).json()).toEqual({ data: { orders: [1, 2] } });
    expect(await (await post('mutation { placeOrder }', fixture.keys.writer)).json()).toEqual({ data: { placeOrder: 3 } });
    // A field with no declared scope needs none.
    expect(await (await post('{ whoami }', fixture.keys.writer)).json()).toEqual({ data: { whoami: 'writer' } });
  });

  it('redacts key text graphql-js quotes from the document, in every result of a batch too', async () => {
    const pasted = fixture.keys.reader;
    const field = pasted.replace(/[^_0-9A-Za-z]/g, '_');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${fixture.keys.reader}` },
      body: JSON.stringify([{ query: `{ ${field} }` }, { query: '{ whoami }' }, { query: 'query ($n: Boolean!) { whoami @include(if: $n) }', variables: { n: pasted } }]),
    });
    const text = await res.text();
    const results = JSON.parse(text) as Body[];
    expect(results).toHaveLength(3);
    expect(results[0]!.errors![0]!.message).toBe(`Cannot query field "…${field.slice(-4)}" on type "Query".`);
    expect(results[1]).toEqual({ data: { whoami: 'reader' } });
    expect(results[2]!.errors![0]!.message).toContain(`…${pasted.slice(-4)}`);
    expect(text).not.toContain(pasted.slice(-20));
  });
});
