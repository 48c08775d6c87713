/**
 * Rate-limit and quota refusals over GraphQL: a real graphql-yoga server (`useApiKey()`)
 * and a real Apollo Server 5 (`apolloApiKeyContext()`), both over HTTP, answer a key past
 * its rate limit or its quota with HTTP 429 and the headers keyset's REST adapters send for
 * the same refusal (the reference: `@keyset/fetch`'s `apiKey()` over the same guard, for a
 * key in the same state), without executing the operation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { createConformanceFixture, type ConformanceFixture } from '@keyset/conformance';
import { createKeyAdmin } from '@keyset/core';
import { apiKey, problemHandler } from '@keyset/fetch';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apolloApiKeyContext, useApiKey, type ApiKeyContext } from './index.ts';

let fixture: ConformanceFixture;
let yogaServer: Server;
let apollo: ApolloServer<ApiKeyContext>;
const urls: Record<'yoga' | 'apollo', string> = { yoga: '', apollo: '' };
let executed = 0;
/** The REST adapter's handler for the same guard: `@keyset/fetch`'s `apiKey()`. */
let rest: (request: Request) => Promise<Response>;

const typeDefs = 'type Query { whoami: String! }';
const resolvers = {
  Query: {
    whoami: (_: unknown, __: unknown, context: ApiKeyContext) => {
      executed++;
      return context.apiKey.name;
    },
  },
};

beforeAll(async () => {
  fixture = await createConformanceFixture();
  rest = problemHandler()(apiKey({ guard: fixture.guard })(() => new Response('{}', { headers: { 'content-type': 'application/json' } })));
  const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), logging: false, plugins: [useApiKey({ guard: fixture.guard })] });
  yogaServer = createServer(yoga);
  await new Promise<void>((resolve) => yogaServer.listen(0, '127.0.0.1', resolve));
  urls.yoga = `http://127.0.0.1:${(yogaServer.address() as AddressInfo).port}/graphql`;
  apollo = new ApolloServer<ApiKeyContext>({ typeDefs, resolvers });
  urls.apollo = (await startStandaloneServer(apollo, { listen: { port: 0, host: '127.0.0.1' }, context: apolloApiKeyContext({ guard: fixture.guard }) })).url;
});
afterAll(async () => {
  await new Promise<void>((resolve) => yogaServer?.close(() => resolve()));
  await apollo?.stop();
  await fixture?.close();
});

const restGet = (key: string) => rest(new Request('http://127.0.0.1/api/whoami', { headers: { authorization: `ApiKey ${key}` } }));
const graphqlPost = (server: 'yoga' | 'apollo', key: string) =>
  fetch(urls[server], { method: 'POST', headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}` }, body: JSON.stringify({ query: '{ whoami }' }) });

/** Headers of the body's framing and the server's own (Apollo's CORS default), not keyset's. */
const FRAMING = ['content-type', 'content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive', 'access-control-allow-origin'];

/**
 * The refusal headers of two responses, side by side, with the seconds left until a reset
 * (`Retry-After`, the `t` of `RateLimit`) taken from the reference where the two differ by
 * a second at most: the second key's window started a moment after the first's, and a
 * busy machine may cross a second boundary between the two requests.
 */
function refusalHeaders(response: Response, reference: Response): [Record<string, string>, Record<string, string>] {
  const read = (r: Response) => Object.fromEntries([...r.headers].filter(([name]) => !FRAMING.includes(name)));
  const [got, want] = [read(response), read(reference)];
  const seconds = (value: string | undefined, pattern: RegExp) => Number(pattern.exec(value ?? '')?.[1]);
  for (const [name, pattern] of [['retry-after', /^(\d+)$/], ['ratelimit', /;t=(\d+)/]] as const) {
    if (Math.abs(seconds(got[name], pattern) - seconds(want[name], pattern)) <= 1) got[name] = want[name]!;
  }
  return [got, want];
}

type Problem = Record<string, unknown> & { type?: unknown; title?: unknown; status?: unknown; detail?: unknown; instance?: unknown };
/**
 * A REST problem's members as a GraphQL error's `extensions` carries them: all but the
 * problem's framing (`instance` names the REST request's path, which a GraphQL request
 * does not have), `retry_after` within a second of `got`'s as the headers are.
 */
async function problemMembers(reference: Response, got: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { type: _type, title: _title, status: _status, detail: _detail, instance: _instance, ...members } = (await reference.json()) as Problem;
  if (typeof members.retry_after === 'number' && Math.abs(Number(got.retry_after) - members.retry_after) <= 1) members.retry_after = got.retry_after;
  return members;
}

describe.each(['yoga', 'apollo'] as const)('%s: refusals as HTTP 429 with the REST headers', (server) => {
  it('a key past its rate limit: 429 rate_limited, the same Retry-After, RateLimit and RateLimit-Policy as REST, nothing executed', async () => {
    const admin = createKeyAdmin(fixture.keyring);
    const issue = async () => (await admin.issue({ name: `limited-${server}`, scopes: ['items:read'], rateLimit: { limit: 1, windowSeconds: 3600 } })).key;
    const [forRest, forGraphql] = [await issue(), await issue()];
    expect((await restGet(forRest)).status).toBe(200);
    expect((await graphqlPost(server, forGraphql)).status).toBe(200);
    const before = executed;
    const reference = await restGet(forRest);
    const res = await graphqlPost(server, forGraphql);
    expect([reference.status, res.status]).toEqual([429, 429]);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(3590);
    const [got, want] = refusalHeaders(res, reference);
    expect(got).toEqual(want);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'rate_limited', ...(await problemMembers(reference, body.errors[0]!.extensions)) });
    expect(executed).toBe(before);
  });

  it('a key whose quota is spent: 429 quota_exhausted, the same RateLimit headers as REST and no Retry-After (a quota does not refill), nothing executed', async () => {
    const admin = createKeyAdmin(fixture.keyring);
    const issue = async () => (await admin.issue({ name: `metered-${server}`, scopes: ['items:read'], quota: { remaining: 1 } })).key;
    const [forRest, forGraphql] = [await issue(), await issue()];
    expect((await restGet(forRest)).status).toBe(200);
    expect((await graphqlPost(server, forGraphql)).status).toBe(200);
    const before = executed;
    const reference = await restGet(forRest);
    const res = await graphqlPost(server, forGraphql);
    expect([reference.status, res.status]).toEqual([429, 429]);
    expect(res.headers.get('retry-after')).toBeNull();
    const [got, want] = refusalHeaders(res, reference);
    expect(got).toEqual(want);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors).toHaveLength(1);
    // The problem's members as REST sends them: what is left of the quota, what the request costs.
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'quota_exhausted', quota_remaining: 0, cost: 1, ...(await problemMembers(reference, body.errors[0]!.extensions)) });
    expect(executed).toBe(before);
  });
});
