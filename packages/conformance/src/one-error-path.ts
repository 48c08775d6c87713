/**
 * One error path, the same on every adapter: each refusal keyset makes (the guard's, the
 * paginator's, the request rules', the not-found handler's) is rendered once, by the
 * adapter's problem handler, with the same status, problem headers and body word for word;
 * and the connection it came on serves the next request. Test support only.
 *
 * "Once" is held three ways: the problem handler reports the refusal exactly once (the
 * not-found handler's 404 and 405 never reach it), the body is one JSON document as long as
 * its `Content-Length` says, and on a kept-alive socket the next response read is the next
 * request's: a second rendering would leave bytes in between, or close the connection.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REALM } from './fixture.ts';
import { keptAlive } from './kept-alive.ts';
import type { RawSend } from './raw-send.ts';
import type { ConformanceWorld, RunningApp } from './world.ts';

/** The problem headers compared across adapters (a framework's own, `Date`, `ETag`, `X-Powered-By`, are not). */
const COMPARED = ['content-type', 'www-authenticate', 'retry-after', 'ratelimit-policy', 'allow'] as const;

/** One refusal: the request, how many admitted requests come first, and the answer every adapter gives. */
interface Refusal {
  readonly name: string;
  readonly path: string;
  readonly key?: keyof ConformanceWorld['keys'];
  readonly headers?: Readonly<Record<string, string>>;
  readonly method?: string;
  /** Admitted requests sent first with the same key and path (to use up a limit). */
  readonly admittedFirst?: number;
  readonly status: number;
  /** The problem body; `retry_after` is checked against the `Retry-After` header. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The compared headers besides `content-type` (always `application/problem+json`). */
  readonly problemHeaders?: Readonly<Record<string, string>>;
  /** The request was admitted by the guard first, so the `RateLimit` headers come too. */
  readonly rateLimit?: boolean;
  /** Rendered by the not-found handler, so the problem handler reports nothing. */
  readonly notFound?: boolean;
}

const problem = (code: string, title: string, status: number, detail: string, instance: string, members: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: `urn:keyset:problem:${code}`,
  title,
  status,
  detail,
  code,
  instance,
  ...members,
});

const WWW = { 'www-authenticate': `ApiKey realm="${REALM}"` };
// core's `instance` shows a path segment that could be a key (8 or more letters and digits
// in a row) by its ends only, on every adapter: `/expensive` is `/exp…sive`.
const LIMIT_DETAIL = '`limit` must be a positive integer written in plain decimal digits (no sign, decimal point, exponent, spaces or leading zeros)';

/** Every kind of refusal the conformance app can make, in the words every adapter must use. */
const REFUSALS: readonly Refusal[] = [
  { name: 'no key', path: '/whoami', status: 401, problemHeaders: WWW, body: problem('missing_api_key', 'Missing API key', 401, 'Send the key in the Authorization header: `Authorization: ApiKey <key>`.', '/whoami') },
  { name: 'a key that is not one', path: '/whoami', headers: { authorization: 'ApiKey nope' }, status: 401, problemHeaders: WWW, body: problem('invalid_api_key', 'Invalid API key', 401, 'The API key is not valid.', '/whoami') },
  {
    name: 'another scheme',
    path: '/whoami',
    headers: { authorization: 'Basic eDp5' },
    status: 401,
    problemHeaders: WWW,
    body: problem('unsupported_auth_scheme', 'Unsupported authentication scheme', 401, 'The Authorization header uses the `Basic` scheme: send the API key as `Authorization: ApiKey <key>`.', '/whoami'),
  },
  {
    name: 'a key in the query',
    path: '/whoami?api_key=x',
    key: 'reader',
    status: 400,
    body: problem(
      'api_key_in_query',
      'API key in query string',
      400,
      'Send the API key in the Authorization header (`Authorization: ApiKey <key>`), never in the URL: remove the `api_key` query parameter, and rotate the key, since URLs are logged.',
      '/whoami',
    ),
  },
  {
    name: 'a missing scope',
    path: '/items',
    key: 'writer',
    status: 403,
    rateLimit: true,
    problemHeaders: { 'ratelimit-policy': '"default";q=1000;w=3600' },
    body: problem('insufficient_scope', 'Insufficient scope', 403, 'This API key lacks the required scope: items:read.', '/items', { missing_scopes: ['items:read'] }),
  },
  {
    name: 'a rate limit',
    path: '/whoami',
    key: 'limited',
    admittedFirst: 2,
    status: 429,
    rateLimit: true,
    problemHeaders: { 'ratelimit-policy': '"default";q=2;w=3600' },
    // 2 an hour: the next in 1800 s, less the seconds since (`retry_after` and `Retry-After` say the same).
    body: problem('rate_limited', 'Too many requests', 429, expect.stringMatching(/^Rate limit exceeded; retry in 1[78]\d\d s\.$/) as unknown as string, '/whoami', { retry_after: 1800 }),
  },
  {
    name: 'a spent quota',
    path: '/expensive',
    key: 'metered',
    admittedFirst: 2,
    status: 429,
    rateLimit: true,
    problemHeaders: { 'ratelimit-policy': '"default";q=1000000;w=60' },
    body: problem('quota_exhausted', 'Quota exhausted', 429, 'Usage quota exhausted: 1 credits left, this request costs 2.', '/exp…sive', { quota: 'key', quota_remaining: 1, cost: 2 }),
  },
  { name: 'an unreachable key store', path: '/down', key: 'reader', status: 503, body: problem('unavailable', 'Service unavailable', 503, 'The key store is unavailable; try again shortly.', '/down') },
  {
    name: "a bad limit after the key (the paginator's, behind the guard)",
    path: '/items?limit=0',
    key: 'reader',
    status: 400,
    rateLimit: true,
    problemHeaders: { 'ratelimit-policy': '"default";q=1000000;w=60' },
    body: problem('invalid_limit', 'Invalid limit', 400, LIMIT_DETAIL, '/items', { parameter: 'limit' }),
  },
  { name: 'a bad limit on an open route', path: '/public/items?limit=abc', status: 400, body: problem('invalid_limit', 'Invalid limit', 400, LIMIT_DETAIL, '/public/items', { parameter: 'limit' }) },
  { name: 'a limit too large', path: '/public/items?limit=1000', status: 400, body: problem('limit_too_large', 'Limit too large', 400, '`limit` must be at most 20, got 1000', '/public/items', { max_limit: 20 }) },
  {
    name: 'a bad cursor',
    path: '/public/items?cursor=garbage',
    status: 400,
    body: problem('invalid_cursor', 'Invalid cursor', 400, 'The cursor is malformed or was not issued for this query; restart from the first page.', '/public/items'),
  },
  {
    name: 'cursor and offset',
    path: '/public/items?offset=0&cursor=x',
    status: 400,
    body: problem('conflicting_pagination', 'Conflicting pagination parameters', 400, 'Send either `cursor` or `offset`, not both', '/public/items', { parameters: ['cursor', 'offset'] }),
  },
  {
    name: 'a request no route should see (the request rules)',
    path: '/public/items',
    headers: { 'content-type': 'json' },
    status: 400,
    body: problem('invalid_request', 'Invalid request', 400, 'The Content-Type header is not a media type such as `application/json`: send one, or no Content-Type at all.', '/public/items', { field: 'content-type' }),
  },
  { name: 'an unknown path', path: '/nope', status: 404, notFound: true, body: problem('not_found', 'Not found', 404, 'No resource matches this path.', '/nope') },
  {
    name: 'a known path under another method',
    path: '/items',
    method: 'POST',
    status: 405,
    notFound: true,
    problemHeaders: { allow: 'GET, HEAD' },
    body: problem('method_not_allowed', 'Method not allowed', 405, 'This path supports only GET, HEAD.', '/items', { allowed_methods: ['GET', 'HEAD'] }),
  },
];

/** The request headers of `refusal`. */
function headersOf(refusal: Refusal, world: ConformanceWorld): Record<string, string> {
  return { ...(refusal.key === undefined ? {} : { authorization: `ApiKey ${world.keys[refusal.key]}` }), ...refusal.headers };
}

/** Asserts one answer to `refusal`: status, the compared headers and the body, one JSON document. */
function expectAnswer(refusal: Refusal, status: number, headers: (name: string) => string | null | undefined, text: string): void {
  const where = `${refusal.name}: ${refusal.method ?? 'GET'} ${refusal.path}`;
  expect({ status, text }, where).toMatchObject({ status: refusal.status });
  const body = JSON.parse(text) as Record<string, unknown>;
  const expected = 'retry_after' in refusal.body ? { ...refusal.body, retry_after: expect.any(Number) } : refusal.body;
  expect(body, where).toEqual(expected);
  if ('retry_after' in refusal.body) expect(body.detail, where).toBe(`Rate limit exceeded; retry in ${String(body.retry_after)} s.`);
  const retry = 'retry_after' in refusal.body ? { 'retry-after': String(body.retry_after) } : {};
  const wanted = { 'content-type': 'application/problem+json', ...refusal.problemHeaders, ...retry };
  const got = Object.fromEntries(COMPARED.flatMap((name) => (headers(name) == null ? [] : [[name, headers(name)]])));
  expect(got, where).toEqual(wanted);
  expect(headers('ratelimit') ?? null, where).toEqual(refusal.rateLimit === true ? expect.stringMatching(/r=\d+/) : null);
  const length = headers('content-length');
  if (length != null) expect(Number(length), where).toBe(Buffer.byteLength(text));
  // A request without a body keeps its connection: nothing of it is left on the way (RFC 9112 §6.3).
  expect(headers('connection')?.toLowerCase(), where).not.toBe('close');
}

/** An app under test: over a socket, `raw` is `rawOverSocket(origin)` (it carries the origin). */
export interface OneErrorPathUnderTest {
  start(): Promise<RunningApp & { raw?: RawSend & { origin?: string } }>;
}

/** Registers, under `describe(name)`, the one-error-path checks of the conformance app. */
export function describeOneErrorPath(name: string, adapter: OneErrorPathUnderTest): void {
  describe(`one error path: ${name}`, () => {
    let app: RunningApp & { raw?: RawSend & { origin?: string } };
    beforeAll(async () => {
      app = await adapter.start();
    });
    afterAll(async () => {
      await app?.close();
    });
    const whoami = async (): Promise<void> => {
      const res = await app.request('/whoami', { headers: { authorization: `ApiKey ${app.world.keys.reader}` } });
      expect({ status: res.status, body: (await res.json()) as unknown }).toMatchObject({ status: 200, body: { name: 'reader' } });
    };

    it('renders every refusal once, in the same words on every adapter, reported once, and the kept-alive connection serves the next request', async () => {
      for (const refusal of REFUSALS) {
        const init = { method: refusal.method ?? 'GET', headers: headersOf(refusal, app.world) };
        for (let i = 0; i < (refusal.admittedFirst ?? 0); i += 1) expect((await app.request(refusal.path, init)).status, refusal.name).toBe(200);
        const before = (await app.world.reports()).length;
        const res = await app.request(refusal.path, init);
        expectAnswer(refusal, res.status, (header) => res.headers.get(header), await res.text());
        const reported = (await app.world.reports()).slice(before);
        expect(reported, refusal.name).toEqual(refusal.notFound === true ? [] : [{ status: refusal.status, message: refusal.body.detail }]);
        // Node's fetch keeps the connection alive: the next request goes on it.
        await whoami();
      }
    });

    it('on one kept-alive socket, each refusal is followed by exactly the next request’s answer', async (context) => {
      const origin = app.raw?.origin;
      if (origin === undefined) return context.skip(); // in process: no socket
      const socket = await keptAlive(origin);
      const { host } = new URL(origin);
      const send = (method: string, path: string, headers: Record<string, string>): void =>
        socket.write(`${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
      try {
        for (const refusal of REFUSALS) {
          // The limits the first test used up stay used: every request here is refused.
          send(refusal.method ?? 'GET', refusal.path, headersOf(refusal, app.world));
          const answer = await socket.read();
          expectAnswer(refusal, answer.status, (header) => answer.headers[header], answer.body);
          expect(answer.closed, refusal.name).toBe(false);
          send('GET', '/whoami', { authorization: `ApiKey ${app.world.keys.reader}` });
          const next = await socket.read();
          expect({ status: next.status, body: JSON.parse(next.body) as unknown }, `after ${refusal.name}`).toMatchObject({ status: 200, body: { name: 'reader' } });
        }
      } finally {
        socket.close();
      }
    });
  });
}
