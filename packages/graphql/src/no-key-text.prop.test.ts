/**
 * No key text in any GraphQL error, on graphql-yoga (`useApiKey()`) and Apollo Server 5
 * (`apolloApiKeyContext()`), both real servers over HTTP: a key (whole, or mangled as keys
 * are found in the wild) sent in every place a client can put one — the `Authorization`
 * header under any scheme, the query string, a cursor argument, a variable, a field or
 * operation name, a broken document — never comes back in the response's body or
 * headers, whether the request is refused before execution or fails inside it. graphql-js
 * quotes the document in its own messages: yoga's plugin redacts them, Apollo Server with
 * `formatError: redactFormattedError`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { createConformanceFixture, type ConformanceFixture } from '@keyset/conformance';
import { createPaginator, paginateArray } from '@keyset/core';
import { mangledKey, secretLeak } from '@keyset/test-support';
import fc from 'fast-check';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apolloApiKeyContext, connection, connectionTypeDefs, planConnection, redactFormattedError, useApiKey, type ApiKeyContext, type ConnectionArgs } from './index.ts';

let fixture: ConformanceFixture;
let yogaServer: Server;
let apollo: ApolloServer<ApiKeyContext>;
const urls: Record<'yoga' | 'apollo', string> = { yoga: '', apollo: '' };

const rows = Array.from({ length: 7 }, (_, i) => ({ id: i + 1 }));
const items = createPaginator<{ id: number }>({ endpoint: 'Query.items', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] } });
const typeDefs = `type Item { id: Int! } ${connectionTypeDefs('Item')} type Query { whoami: String! items(first: Int, after: String, last: Int, before: String): ItemConnection! }`;
const resolvers = {
  Query: {
    whoami: (_: unknown, __: unknown, context: ApiKeyContext) => context.apiKey.name,
    items: async (_: unknown, args: ConnectionArgs) => {
      const plan = await planConnection(items, args);
      return connection(items, plan, paginateArray(rows, plan, plan.sort).rows);
    },
  },
};

beforeAll(async () => {
  fixture = await createConformanceFixture();
  const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), logging: false, plugins: [useApiKey({ guard: fixture.guard })] });
  yogaServer = createServer(yoga);
  await new Promise<void>((resolve) => yogaServer.listen(0, '127.0.0.1', resolve));
  urls.yoga = `http://127.0.0.1:${(yogaServer.address() as AddressInfo).port}/graphql`;
  apollo = new ApolloServer<ApiKeyContext>({ typeDefs, resolvers, formatError: redactFormattedError });
  urls.apollo = (await startStandaloneServer(apollo, { listen: { port: 0, host: '127.0.0.1' }, context: apolloApiKeyContext({ guard: fixture.guard }) })).url;
});
afterAll(async () => {
  await new Promise<void>((resolve) => yogaServer?.close(() => resolve()));
  await apollo?.stop();
  await fixture?.close();
});

/** Where the key text goes. The places in the document carry a valid key in the header, so the request reaches execution. */
const PLACES = ['authorization', 'query-string', 'cursor-literal', 'cursor-variable', 'int-variable', 'field-name', 'alias', 'operation-name', 'broken-document', 'x-api-key'] as const;
type Place = (typeof PLACES)[number];

function request(server: 'yoga' | 'apollo', place: Place, sent: string, scheme: string): Promise<Response> {
  const valid = { authorization: `ApiKey ${fixture.keys.reader}` };
  const post = (body: Record<string, unknown>, headers: Record<string, string> = valid, url = urls[server]) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const quoted = JSON.stringify(sent);
  switch (place) {
    case 'authorization':
      return post({ query: '{ whoami }' }, { authorization: `${scheme} ${sent}` });
    case 'query-string':
      return post({ query: '{ whoami }' }, valid, `${urls[server]}?api_key=${encodeURIComponent(sent)}`);
    case 'cursor-literal':
      return post({ query: `{ items(first: 2, after: ${quoted}) { edges { cursor } } }` });
    case 'cursor-variable':
      return post({ query: 'query ($before: String) { items(last: 2, before: $before) { edges { cursor } } }', variables: { before: sent } });
    case 'int-variable':
      return post({ query: 'query ($first: Int) { items(first: $first) { edges { cursor } } }', variables: { first: sent } });
    case 'field-name':
      return post({ query: `{ ${sent.replace(/[^_0-9A-Za-z]/g, '_')} }` });
    case 'alias':
      // An alias is the error's `path` when the field fails (here: a cursor that is not one).
      return post({ query: `{ ${sent.replace(/[^_0-9A-Za-z]/g, '_').replace(/^[0-9]/, '_')}: items(first: 2, after: "opaqueCursor") { edges { cursor } } }` });
    case 'operation-name':
      return post({ query: '{ whoami }', operationName: sent });
    case 'broken-document':
      return post({ query: `{ items(first: ${sent}) }` });
    case 'x-api-key':
      return post({ query: '{ whoami }' }, { 'x-api-key': sent });
  }
}

describe.each(['yoga', 'apollo'] as const)('%s: no key text in any response', (server) => {
  it('a key, whole or mangled, in any place a client can put it: not in the body, not in a header', async () => {
    await fc.assert(
      fc.asyncProperty(mangledKey, fc.constantFrom(...PLACES), fc.constantFrom('ApiKey', 'apikey', 'Bearer', 'Basic', 'Token'), async ({ key, sent }, place, scheme) => {
        const res = await request(server, place, sent, scheme);
        const text = `${res.status}\n${[...res.headers].map(([n, v]) => `${n}: ${v}`).join('\n')}\n${await res.text()}`;
        expect(res.status, text).toBeLessThan(500);
        expect(secretLeak(text, [key]), `${place}: ${text}`).toBeUndefined();
      }),
      { numRuns: 120 },
    );
  }, 120_000);
});
