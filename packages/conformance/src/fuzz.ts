/**
 * Shared fuzzing of an adapter's HTTP surface with fast-check: random query strings
 * (pagination and credential parameters, unicode, broken %-encodings, repeated and
 * bracketed keys, huge numbers, real and tampered cursors), random `Authorization`
 * headers and JSON bodies. Whatever a client sends: never a 5xx, and every 4xx is an
 * `application/problem+json` problem with a `code`. Failures print a replayable seed.
 * Test support only.
 * @module
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { AdapterUnderTest, ConformanceWorld, RunningApp, SendRequest } from './world.ts';

/** One generated request. */
export interface FuzzRequest {
  path: string;
  init: RequestInit;
}

const PARAM_NAMES = [
  'limit', 'offset', 'cursor', 'status', 'sort', 'api_key', 'apikey', 'api-key', 'access_token', 'API_KEY',
  'a[b]', 'limit[]', 'limit[0]', 'cursor[x]', 'offset[__proto__]', '__proto__', 'constructor[prototype]',
  '', 'x', 'li%6Dit', 'limit%00',
];

const HEADER_CHARS = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((code) => code !== 0x7f)
  .map((code) => String.fromCharCode(code));

function encodeIfPossible(text: string, encode: boolean): string {
  if (!encode) return text;
  try {
    return encodeURIComponent(text);
  } catch {
    return text; // a lone surrogate: sent raw, the URL parser replaces it
  }
}

function tamper(text: string): fc.Arbitrary<string> {
  return fc.tuple(fc.nat({ max: Math.max(0, text.length - 1) }), fc.constantFrom('A', 'z', '_', '-', '0', '')).map(
    ([at, c]) => text.slice(0, at) + c + text.slice(at + 1),
  );
}

/** Requests built from the fixture's keys and from `cursors` harvested from real pages. */
export function fuzzRequests(fixture: ConformanceWorld, cursors: readonly string[]): fc.Arbitrary<FuzzRequest> {
  const { reader, writer, limited, elsewhere } = fixture.keys;
  const cursor = fc.constantFrom(...cursors);
  const value = fc.oneof(
    fc.constantFrom('', '0', '1', '5', '20', '21', '-1', '+5', ' 5', '1.5', '1e3', '0x10', '007', 'NaN', 'Infinity'),
    fc.constantFrom('9007199254740991', '9007199254740992', '99999999999999999999999999', 'paid', 'open', '%', '%zz', '%E0%A4%A', '%00', '%2B1', '%25', 'a[b]=c', '&&', '=='),
    fc.nat().map(String),
    fc.bigInt({ min: 0n, max: 10n ** 40n }).map(String),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 12 }),
    cursor,
    cursor.chain(tamper),
    fc.constantFrom(reader, fixture.foreignKey, `${reader}x`),
    // A mistyped key (not api_key_in_query: its checksum fails) glued to filter or sort text.
    fc.tuple(fc.constantFrom('', '-', '--', 'id,', 'paid'), tamper(reader)).map(([before, k]) => before + k),
  );
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PARAM_NAMES) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) });
  const pair = fc.tuple(key, value, fc.boolean()).map(([k, v, encode]) => `${encodeIfPossible(k, encode)}=${encodeIfPossible(v, encode)}`);
  const query = fc.oneof(
    fc.array(pair, { maxLength: 6 }).map((pairs) => pairs.join('&')),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
  const path = fc.oneof(
    { weight: 8, arbitrary: fc.constant('/items') },
    { weight: 2, arbitrary: fc.constantFrom('/public/items', '/whoami', '/query', '/nope', '/items/', '/%', '/%E0%A4', '/items/%zz') },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => `/${encodeIfPossible(s, true)}`) },
  );
  const authorization = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(`ApiKey ${reader}`, `apikey  ${reader}`, `ApiKey ${writer}`, `ApiKey ${limited}`, `ApiKey ${elsewhere}`, `ApiKey ${fixture.foreignKey}`) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', 'ApiKey', 'ApiKey ', 'Bearer abc', 'Basic Zm9vOmJhcg==', `ApiKey ${reader} ${reader}`, `ApiKey\t${reader}`) },
    { weight: 2, arbitrary: tamper(reader).map((k) => `ApiKey ${k}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('ApiKey', 'APIKEY', 'Bearer', '', 'ApiKey,'), fc.string({ unit: HEADER_CHARS, maxLength: 60 }))
        .map(([scheme, rest]) => `${scheme} ${rest}`),
    },
  );
  const body = fc.oneof(
    fc.constant(undefined),
    fc.json({ maxDepth: 2 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.constantFrom('{', '{"a":', '[1,]', 'null', '"\\u12"', `{"key":"${reader}"`),
  );
  // Whatever a client writes into X-Forwarded-For (no trusted proxy here) changes nothing.
  const forwardedFor = fc.option(fc.oneof(fc.constantFrom('203.0.113.5', '::1, 127.0.0.1', 'unknown', '[::1]:80'), fc.string({ unit: HEADER_CHARS, maxLength: 40 })), { nil: undefined });
  return fc.record({ path, query, authorization, body, post: fc.boolean(), xff: forwardedFor }).map(({ path: p, query: q, authorization: a, body: b, post, xff }) => {
    const headers: Record<string, string> = {};
    if (a !== undefined) headers.authorization = a;
    if (xff !== undefined && xff.trim() !== '') headers['x-forwarded-for'] = xff;
    const init: RequestInit = { headers };
    if (post && b !== undefined) {
      headers['content-type'] = 'application/json';
      Object.assign(init, { method: 'POST', body: b });
    }
    return { path: post && b !== undefined ? `/echo?${q}` : `${p}?${q}`, init };
  });
}

/**
 * Asserts the contract every response must meet; throws with the details otherwise.
 * `secrets`: the secret parts of keys a request may carry (also mistyped); no problem
 * quotes 8 characters of one, in any letter case.
 */
export async function checkResponse(request: FuzzRequest, res: Response, secrets: readonly string[] = []): Promise<void> {
  const text = await res.text();
  const fail = (why: string): never => {
    throw new Error(`${why}: ${request.init.method ?? 'GET'} ${request.path} → ${res.status} ${text.slice(0, 300)}`);
  };
  if (res.status >= 500) fail('server error for a client request');
  const type = res.headers.get('content-type') ?? '';
  if (res.status >= 400) {
    if (!/^application\/problem\+json(;|$)/.test(type)) fail(`4xx with content-type '${type}'`);
    const body = JSON.parse(text) as { code?: unknown; status?: unknown };
    if (typeof body.code !== 'string' || body.code === '') fail('problem without a code');
    if (body.status !== res.status) fail('problem status differs from the response status');
    const folded = text.toLowerCase();
    for (const secret of secrets) {
      for (let i = 0; i + 8 <= secret.length; i++) if (folded.includes(secret.slice(i, i + 8).toLowerCase())) fail('problem quotes key text');
    }
  } else if (res.status === 200) {
    if (!/^application\/json(;|$)/.test(type)) fail(`200 with content-type '${type}'`);
    JSON.parse(text);
    const link = res.headers.get('link');
    if (link !== null && !link.split(', ').every((part) => /^<https?:\/\/[^>]+>; rel="(next|prev|first)"$/.test(part))) fail(`bad Link header ${link}`);
  } else {
    fail('unexpected status');
  }
}

/** Collects real cursors (first pages with and without the filter) to mutate. */
export async function harvestCursors(send: SendRequest, fixture: ConformanceWorld): Promise<string[]> {
  const cursors: string[] = [];
  for (const query of ['limit=3', 'limit=3&status=paid', 'limit=1&status=open']) {
    const res = await send(`/items?${query}`, { headers: { authorization: `ApiKey ${fixture.keys.reader}` } });
    const { nextCursor } = (await res.json()) as { nextCursor: string };
    cursors.push(nextCursor);
    // The second page's prevCursor: a backward cursor.
    const second = await send(`/items?${query}&cursor=${nextCursor}`, { headers: { authorization: `ApiKey ${fixture.keys.reader}` } });
    cursors.push(((await second.json()) as { prevCursor: string }).prevCursor);
  }
  return cursors;
}

/** Runs `numRuns` random requests through `send` and checks every response. */
export async function fuzzAdapter(send: SendRequest, fixture: ConformanceWorld, numRuns: number): Promise<void> {
  const cursors = await harvestCursors(send, fixture);
  const { reader, writer, limited, elsewhere } = fixture.keys;
  const secrets = [reader, writer, limited, elsewhere, fixture.foreignKey].map((key) => key.slice(-38));
  await fc.assert(
    fc.asyncProperty(fuzzRequests(fixture, cursors), async (request) => {
      await checkResponse(request, await send(request.path, request.init), secrets);
    }),
    { numRuns },
  );
}

/**
 * Registers the fuzz under `describe(name)`: `numRuns` random requests (2,000 by default)
 * to one fresh app; never a 5xx, every 4xx a problem with a code.
 */
export function describeAdapterFuzz(name: string, adapter: Pick<AdapterUnderTest, 'start'>, numRuns = 2000): void {
  describe(`adapter fuzz: ${name}`, () => {
    let app: RunningApp;
    beforeAll(async () => {
      app = await adapter.start();
    });
    afterAll(async () => {
      await app?.close();
    });

    it(`never answers 5xx, and every 4xx is a problem with a code that quotes no key (${numRuns} requests)`, async () => {
      await fuzzAdapter(app.request, app.world, numRuns);
    }, 120_000);
  });
}
