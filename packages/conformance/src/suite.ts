/**
 * One HTTP conformance suite for every keyset adapter (pagination, API keys, problems). Each adapter's
 * test starts the same app (in process, or as a server under another runtime) and hands
 * over a way to send requests and the world the app serves; the suite asserts status,
 * headers and bodies. Test support only: this package is private and never published.
 *
 * The app under test must serve, with the adapter's own middleware:
 * - `GET /items`: `apiKey({ guard, scopes: ['items:read'] })`, then
 *   `paginate(paginator, { filters: fixture.filters(query) })`, then
 *   `sendPage(fixture.list(plan, query).rows, { total })`;
 * - `GET /public/items`: the same without `apiKey`;
 * - `GET /whoami`: `apiKey({ guard })`, answering `{ id, name, last4 }` of the verified key;
 * - `GET /permitted`: `apiKey({ guard, permissions: PERMITTED_QUERY })`, answering `{ name }` of the verified key;
 * - `GET /whoami/any-scheme`: the same with `apiKey({ guard: fixture.anySchemeGuard })`;
 * - `GET /down`: `apiKey({ guard: fixture.downGuard })` (its key store is unreachable);
 * - `POST /echo`: `apiKey({ guard })`, then parsing the JSON body and answering `{ received }`;
 *   a body over `MAX_ECHO_BYTES` is 413, as the framework's body limit answers it;
 * - `GET /query`: `paginate(paginator)`, answering the framework's own parsed query as JSON;
 * - `GET /throws`: throws `new Error('boom: secret detail')`;
 * - `GET /options/peer`: `apiKey({ guard, clientAddress: () => OPTION_PEER })`, answering `{ name }`;
 * - `GET /options/proxied`: `apiKey({ guard: fixture.proxyGuard })`, answering `{ name }`;
 * - `GET /options/page`: `paginate(paginator, { filters: (query, request) => ({ tenant }) })`,
 *   `tenant` the request's `X-Tenant` header read from the framework's request, then
 *   `sendPage(rows, { headers: { 'cache-control': 'no-store', link: 'ignored' } })`;
 * - `GET /inflight/throws`: `apiKey({ guard })`, then throws `new Error('boom after admission')`;
 * - `GET /inflight/stream`: `apiKey({ guard })`, then answers `inflightStream(inflightChunks(query))`
 *   as a streamed `text/plain` body;
 * - `GET /inflight/slow`: `apiKey({ guard })`, then waits until the client goes away;
 * - `GET, POST, OPTIONS, DELETE /inflight/status` (and `HEAD` as the framework derives it
 *   from `GET`): `apiKey({ guard })`, then answers `inflightStatus(query)`;
 * - `GET /inflight/rejects`: `apiKey({ guard })`, then an `async` handler that rejects with an `Error`;
 * - `GET /inflight/throws-value`: `apiKey({ guard })`, then throws a string (no `Error`);
 * - `GET /inflight/rethrown` and `GET /inflight/non-error`: `apiKey({ guard })`, then throw
 *   `new Error(RETHROWN)` / `new Error(NON_ERROR)`; the app's error handler rethrows the
 *   first and throws a string for the second;
 * - not-found and problem handlers (the not-found one answering 405 with `Allow` for a known
 *   path under another method), the latter pushing `{ error, status }` to `fixture.reported`.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFLIGHT_STATUSES, LIMITS, OPTION_PEER, REALM, TOTAL_CAP } from './fixture.ts';
import type { Item } from './fixture.ts';
import { fuzzAdapter } from './fuzz.ts';
import type { AdapterUnderTest, ConformanceWorld, RunningApp } from './world.ts';

/** The query `GET /query` is called with. */
export const PARSED_QUERY_SEARCH = '?limit=2&a[b]=c&x=1&x=2';

const PROBLEM = /^application\/problem\+json(;|$)/;

/** Asserts a problem response and returns its body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(PROBLEM);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: expect.stringContaining(code), title: expect.any(String), detail: expect.any(String) });
  return body;
}

/** The targets of a `Link` header by relation type; fails on anything but `<url>; rel="…"` parts. */
export function linkTargets(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of header === null ? [] : header.split(', ')) {
    const m = /^<(https?:\/\/[^>]+)>; rel="(next|prev|first)"$/.exec(part);
    expect(m, `Link part ${part}`).not.toBeNull();
    expect(out[m![2]!], `rel="${m![2]}" twice`).toBeUndefined();
    out[m![2]!] = m![1]!;
  }
  return out;
}

const auth = (key: string): RequestInit => ({ headers: { authorization: `ApiKey ${key}` } });

/** Registers the suite under `describe(name)`. */
export function describeAdapterConformance(name: string, adapter: AdapterUnderTest): void {
  describe(`adapter conformance: ${name}`, () => {
    let app: RunningApp;
    let fixture: ConformanceWorld;
    let reader: RequestInit;
    const get = (path: string, init?: RequestInit): Promise<Response> => app.request(path, init);

    beforeAll(async () => {
      app = await adapter.start();
      fixture = app.world;
      reader = auth(fixture.keys.reader);
    });
    afterAll(async () => {
      await app?.close();
    });

    const expected = (status?: Item['status']): number[] =>
      [...fixture.items]
        .filter((item) => status === undefined || item.status === status)
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .map((item) => item.id);

    describe('pagination', () => {
      it('Link keeps limit, sort, the filters and the parameters the app declared, and drops every other one', async () => {
        // A key cut to 36 characters, or split by dots, as an unknown parameter's name or value.
        const secret = fixture.keys.reader.slice(-38);
        const cut = secret.slice(0, 36);
        const dotted = `${secret.slice(0, 12)}.${secret.slice(12, 24)}.${secret.slice(24)}`;
        const res = await get(`/items?status=open&limit=3&sort=-id&x=kept&${cut}=1&utm=${dotted}&${dotted}=2`, reader);
        expect(res.status).toBe(200);
        const link = res.headers.get('link') ?? '';
        const next = new URL(linkTargets(link).next!);
        expect([...next.searchParams.keys()]).toEqual(['status', 'limit', 'sort', 'x', 'cursor']);
        for (let i = 0; i + 8 <= secret.length; i++) expect(link).not.toContain(secret.slice(i, i + 8));
      });

      it('serves the first cursor page with a Link header and RateLimit headers', async () => {
        const res = await get('/items?status=open&limit=3', reader);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await res.json()) as { items: Item[]; nextCursor: string | null; prevCursor: string | null };
        expect(body.items.map((item) => item.id)).toEqual(expected('open').slice(0, 3));
        expect(body.nextCursor).toEqual(expect.any(String));
        // The first page: nothing before it, so no prevCursor and no rel="prev"/"first".
        expect(body.prevCursor).toBeNull();
        const link = res.headers.get('link') ?? '';
        expect(link).toMatch(/^<https?:\/\/[^>]+\/items\?[^>]*>; rel="next"$/);
        const next = new URL(/^<([^>]+)>/.exec(link)?.[1] ?? '');
        expect(next.searchParams.get('status')).toBe('open');
        expect(next.searchParams.get('limit')).toBe('3');
        expect(next.searchParams.get('cursor')).toBe(body.nextCursor);
        expect(res.headers.get('ratelimit')).toEqual(expect.any(String));
        expect(res.headers.get('ratelimit-policy')).toEqual(expect.any(String));
      });

      it('uses the default page size', async () => {
        const body = (await (await get('/public/items')).json()) as { items: Item[] };
        expect(body.items).toHaveLength(LIMITS.default);
      });

      it('walks every row exactly once by nextCursor, ending with nextCursor null and no rel="next"', async () => {
        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        let last: Response | undefined;
        do {
          const query = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
          last = await get(`/items?limit=7${query}`, reader);
          expect(last.status).toBe(200);
          const body = (await last.json()) as { items: Item[]; nextCursor: string | null };
          seen.push(...body.items.map((item) => item.id));
          cursor = body.nextCursor;
          pages += 1;
        } while (cursor !== null && pages < 100);
        expect(seen).toEqual(expected());
        expect(pages).toBe(Math.ceil(fixture.items.length / 7));
        expect(Object.keys(linkTargets(last.headers.get('link')))).toEqual(['prev', 'first']);
      });

      it('walks back from the last page by prevCursor and rel="prev": the same pages reversed, ending with prevCursor null', async () => {
        type Body = { items: Item[]; nextCursor: string | null; prevCursor: string | null };
        const forward: number[][] = [];
        let res = await get('/items?status=paid&limit=3', reader);
        let body = (await res.json()) as Body;
        forward.push(body.items.map((item) => item.id));
        while (body.nextCursor !== null && forward.length < 100) {
          res = await get(linkTargets(res.headers.get('link')).next!, reader);
          body = (await res.json()) as Body;
          forward.push(body.items.map((item) => item.id));
        }
        expect(forward.flat()).toEqual(expected('paid'));
        // Back by following rel="prev" alone; it always carries the body's prevCursor.
        const back: number[][] = [];
        let links = linkTargets(res.headers.get('link'));
        while (links.prev !== undefined && back.length < 100) {
          expect(new URL(links.prev).searchParams.get('cursor')).toBe(body.prevCursor);
          // rel="first" keeps the filter and the page size, without a cursor.
          const first = new URL(links.first!);
          expect([...first.searchParams]).toEqual([
            ['status', 'paid'],
            ['limit', '3'],
          ]);
          res = await get(links.prev, reader);
          expect(res.status).toBe(200);
          body = (await res.json()) as Body;
          back.push(body.items.map((item) => item.id));
          links = linkTargets(res.headers.get('link'));
        }
        expect(back).toEqual(forward.slice(0, -1).reverse());
        expect(body.prevCursor).toBeNull();
        expect(Object.keys(links)).toEqual(['next']);
        // And forward again from the start of the walk back.
        const again = (await (await get(links.next!, reader)).json()) as Body;
        expect(again.items.map((item) => item.id)).toEqual(forward[1]);
      });

      it('walks a filtered collection by following Link headers alone', async () => {
        const seen: number[] = [];
        let url: string | null = '/items?status=paid&limit=4';
        let pages = 0;
        while (url !== null && pages < 100) {
          const res = await get(url, reader);
          expect(res.status).toBe(200);
          seen.push(...((await res.json()) as { items: Item[] }).items.map((item) => item.id));
          url = linkTargets(res.headers.get('link')).next ?? null;
          pages += 1;
        }
        expect(seen).toEqual(expected('paid'));
        expect(new Set(seen).size).toBe(seen.length);
      });

      it('walks every row exactly once by offset, with the total (capped: "at least" until the last page proves it)', async () => {
        const seen: number[] = [];
        for (let offset = 0; offset < fixture.items.length; offset += 10) {
          const res = await get(`/items?offset=${offset}&limit=10`, reader);
          expect(res.status).toBe(200);
          const body = (await res.json()) as { items: Item[]; total: number; totalAtLeast?: true; totalEstimated?: true };
          expect(body.totalEstimated).toBeUndefined();
          if (offset + 10 < fixture.items.length) {
            // The count stops at TOTAL_CAP; the page itself proves offset + 10 + 1 rows.
            expect(body).toMatchObject({ total: Math.max(TOTAL_CAP, offset + 11), totalAtLeast: true });
          } else {
            expect(body.total).toBe(fixture.items.length);
            expect(body.totalAtLeast).toBeUndefined();
          }
          seen.push(...body.items.map((item) => item.id));
          const links = linkTargets(res.headers.get('link'));
          if (offset + 10 < fixture.items.length) expect(new URL(links.next!).searchParams.get('offset')).toBe(String(offset + 10));
          else expect(links.next).toBeUndefined();
          if (offset === 0) expect(links.prev ?? links.first).toBeUndefined();
          else {
            expect(new URL(links.prev!).searchParams.get('offset')).toBe(String(offset - 10));
            expect(new URL(links.first!).searchParams.get('offset')).toBe('0');
          }
        }
        expect(seen).toEqual(expected());
      });

      it('counts a filtered collection under the cap exactly, with no flag', async () => {
        const res = await get('/items?status=paid&offset=0&limit=5', reader);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ items: expect.any(Array), total: expected('paid').length });
      });

      it.each([
        ['limit=0'],
        ['limit=abc'],
        ['limit='],
        ['limit=-1'],
        ['limit=1.5'],
        ['limit=1e1'],
        ['limit=%2B5'],
        ['limit=1&limit=2'],
        ['limit=99999999999999999999'],
      ])('rejects %s with 400 invalid_limit', async (query) => {
        await expectProblem(await get(`/items?${query}`, reader), 400, 'invalid_limit');
      });

      it('rejects a limit over the maximum with 400 limit_too_large and max_limit', async () => {
        const body = await expectProblem(await get(`/items?limit=${LIMITS.max + 1}`, reader), 400, 'limit_too_large');
        expect(body.max_limit).toBe(LIMITS.max);
      });

      it.each([['offset=-1'], ['offset=01'], ['offset='], ['offset=x'], ['offset=1&offset=2']])(
        'rejects %s with 400 invalid_offset',
        async (query) => {
          await expectProblem(await get(`/items?${query}`, reader), 400, 'invalid_offset');
        },
      );

      it('rejects a tampered, truncated or foreign-filter cursor with 400 invalid_cursor', async () => {
        const first = (await (await get('/items?status=paid&limit=2', reader)).json()) as { nextCursor: string };
        const cursor = first.nextCursor;
        const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
        for (const bad of [flipped, cursor.slice(0, -3), 'garbage', '%']) {
          const res = await get(`/items?status=paid&cursor=${encodeURIComponent(bad)}`, reader);
          await expectProblem(res, 400, 'invalid_cursor');
        }
        // Replayed against another filter: the signature covers the filters.
        const replay = await get(`/items?status=open&cursor=${encodeURIComponent(cursor)}`, reader);
        await expectProblem(replay, 400, 'invalid_cursor');
      });

      it('orders by ?sort= (walking both ways), keeps sort in every Link, and binds it into the cursor', async () => {
        type Body = { items: Item[]; nextCursor: string | null; prevCursor: string | null };
        const byId = [...fixture.items].sort((a, b) => b.id - a.id).map((item) => item.id);
        const seen: number[] = [];
        let res = await get('/items?sort=-id&limit=20', reader);
        let pages = 0;
        for (;;) {
          expect(res.status).toBe(200);
          const body = (await res.json()) as Body;
          seen.push(...body.items.map((item) => item.id));
          const links = linkTargets(res.headers.get('link'));
          for (const target of Object.values(links)) expect(new URL(target).searchParams.get('sort')).toBe('-id');
          if (links.next === undefined || ++pages > 10) break;
          res = await get(links.next, reader);
        }
        expect(seen).toEqual(byId);
        // A cursor issued under ?sort=-id is refused under the default order and another sort.
        const first = (await (await get('/items?sort=-id&limit=3', reader)).json()) as Body;
        await expectProblem(await get(`/items?limit=3&cursor=${first.nextCursor}`, reader), 400, 'invalid_cursor');
        await expectProblem(await get(`/items?sort=id&limit=3&cursor=${first.nextCursor}`, reader), 400, 'invalid_cursor');
        const second = (await (await get(`/items?sort=-id&limit=3&cursor=${first.nextCursor}`, reader)).json()) as Body;
        const back = (await (await get(`/items?sort=-id&limit=3&cursor=${second.prevCursor}`, reader)).json()) as Body;
        expect(back.items).toEqual(first.items);
      });

      it.each([['sort=price'], ['sort=id,id'], ['sort='], ['sort=-'], ['sort=id&sort=score']])('rejects %s with 400 invalid_sort naming the fields', async (query) => {
        const body = await expectProblem(await get(`/items?${query}`, reader), 400, 'invalid_sort');
        expect(body.sortable).toEqual(['score', 'id']);
      });

      it('rejects cursor and offset together with 400 conflicting_pagination', async () => {
        const { nextCursor } = (await (await get('/items?limit=2', reader)).json()) as { nextCursor: string };
        await expectProblem(await get(`/items?offset=0&cursor=${encodeURIComponent(nextCursor)}`, reader), 400, 'conflicting_pagination');
      });

      it('puts the path without the query in `instance`, and keeps RateLimit headers on errors', async () => {
        const res = await get('/items?limit=0&note=secret', reader);
        expect(res.headers.get('ratelimit')).toEqual(expect.any(String));
        const body = await expectProblem(res, 400, 'invalid_limit');
        expect(body.instance).toBe('/items');
      });

      it("leaves the framework's parsed query untouched", async () => {
        const res = await get(`/query${PARSED_QUERY_SEARCH}`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(adapter.parsedQuery);
      });
    });

    describe('API keys', () => {
      it('exposes the verified key to the handler', async () => {
        const res = await get('/whoami', reader);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ name: 'reader', last4: fixture.keys.reader.slice(-4), id: expect.any(String) });
        expect(JSON.stringify(body)).not.toContain(fixture.keys.reader);
      });

      it('matches the scheme case-insensitively with several spaces', async () => {
        const res = await get('/whoami', { headers: { authorization: `aPiKeY   ${fixture.keys.reader}` } });
        expect(res.status).toBe(200);
      });

      it('refuses a key in the query with 400 api_key_in_query, even with a valid header', async () => {
        for (const query of ['api_key=x', 'apikey=x', 'api-key=x', 'access_token=x', `q=${fixture.keys.reader}`]) {
          await expectProblem(await get(`/items?${query}`, reader), 400, 'api_key_in_query');
          await expectProblem(await get(`/whoami?${query}`), 400, 'api_key_in_query');
        }
      });

      it('answers a request without credentials with 401 missing_api_key and WWW-Authenticate', async () => {
        for (const init of [undefined, { headers: { authorization: '' } }]) {
          const res = await get('/items', init);
          expect(res.headers.get('www-authenticate')).toBe(`ApiKey realm="${REALM}"`);
          await expectProblem(res, 401, 'missing_api_key');
        }
      });

      it('answers a key in another scheme or in X-API-Key with 401 unsupported_auth_scheme saying where it goes', async () => {
        const key = fixture.keys.reader;
        const cases = [
          [{ authorization: `Bearer ${key}` }, 'The Authorization header uses the `Bearer` scheme'],
          [{ authorization: `Basic ${btoa(`${key}:`)}` }, 'The Authorization header uses the `Basic` scheme'],
          [{ 'x-api-key': key }, 'The X-API-Key header is not read'],
        ] as const;
        for (const [headers, detail] of cases) {
          const res = await get('/items', { headers });
          expect(res.headers.get('www-authenticate')).toBe(`ApiKey realm="${REALM}"`);
          const body = await expectProblem(res, 401, 'unsupported_auth_scheme');
          expect(body).toMatchObject({ title: 'Unsupported authentication scheme' });
          expect(String(body.detail)).toContain(detail);
          expect(String(body.detail)).toContain('`Authorization: ApiKey <key>`');
          expect(JSON.stringify(body)).not.toContain(key.slice(-8));
        }
      });

      it('reads Bearer and X-API-Key only where the keyring lists them (schemes), with one challenge per scheme', async () => {
        const key = fixture.keys.reader;
        const forms: RequestInit[] = [{ headers: { authorization: `ApiKey ${key}` } }, { headers: { authorization: `Bearer ${key}` } }, { headers: { 'x-api-key': key } }];
        const me = (await (await get('/whoami', forms[0])).json()) as Record<string, unknown>;
        // ApiKey only (the default): the other two are told where the key goes.
        expect((await get('/whoami', forms[0])).status).toBe(200);
        for (const init of forms.slice(1)) {
          const res = await get('/whoami', init);
          expect(res.headers.get('www-authenticate')).toBe(`ApiKey realm="${REALM}"`);
          await expectProblem(res, 401, 'unsupported_auth_scheme');
        }
        // All three listed: each is the same caller.
        for (const init of forms) {
          const res = await get('/whoami/any-scheme', init);
          expect(res.status).toBe(200);
          expect(await res.json()).toEqual(me);
        }
        const challenge = `ApiKey realm="${REALM}", Bearer realm="${REALM}", X-API-Key realm="${REALM}"`;
        for (const init of [undefined, { headers: { authorization: `Bearer ${fixture.foreignKey}` } }, { headers: { 'x-api-key': 'nope' } }]) {
          const res = await get('/whoami/any-scheme', init);
          expect(res.status).toBe(401);
          expect(res.headers.get('www-authenticate')).toBe(challenge);
        }
        // Two credentials, or a key in the query string, stay refused whatever is read.
        for (const headers of [{ authorization: `Bearer ${key}`, 'x-api-key': key }, { authorization: `ApiKey ${key}`, 'x-api-key': key }]) {
          const body = await expectProblem(await get('/whoami/any-scheme', { headers }), 400, 'invalid_request');
          expect(body.field).toBe('authorization');
        }
        await expectProblem(await get(`/whoami/any-scheme?api_key=${key}`, forms[1]), 400, 'api_key_in_query');
      });

      it('answers a malformed, mistyped or unknown key with 401 invalid_api_key', async () => {
        const { reader: key } = fixture.keys;
        const typo = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
        for (const bad of ['nope', typo, fixture.foreignKey]) {
          const res = await get('/items', auth(bad));
          expect(res.headers.get('www-authenticate')).toBe(`ApiKey realm="${REALM}"`);
          const body = await expectProblem(res, 401, 'invalid_api_key');
          expect(JSON.stringify(body)).not.toContain(bad);
        }
      });

      it('answers a key without the scope with 403 insufficient_scope and missing_scopes', async () => {
        const body = await expectProblem(await get('/items', auth(fixture.keys.writer)), 403, 'insufficient_scope');
        expect(body.missing_scopes).toEqual(['items:read']);
      });

      it('checks apiKey({ permissions }) as a query: either branch of an `or` admits, a role counts, and a 403 names a set that would', async () => {
        for (const [key, name] of [[fixture.keys.reader, 'reader'], [fixture.keys.auditor, 'auditor']] as const) {
          const res = await get('/permitted', auth(key));
          expect(res.status, name).toBe(200);
          expect(await res.json()).toEqual({ name });
        }
        // writer misses one permission in each branch: the first branch's is named.
        const body = await expectProblem(await get('/permitted', auth(fixture.keys.writer)), 403, 'insufficient_scope');
        expect(body.missing_scopes).toEqual(['items:read']);
      });

      it('counts a 403 insufficient_scope against the rate limit and sends the RateLimit headers with it', async () => {
        const remaining = async (): Promise<number> => {
          const res = await get('/items', auth(fixture.keys.writer));
          expect(res.status).toBe(403);
          expect(res.headers.get('ratelimit-policy')).toMatch(/q=\d+/);
          return Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
        };
        const first = await remaining();
        expect(await remaining()).toBe(first - 1);
      });

      it('answers over the per-key limit with 429 rate_limited, Retry-After and RateLimit headers', async () => {
        const limited = auth(fixture.keys.limited);
        for (let i = 0; i < 2; i += 1) {
          const ok = await get('/whoami', limited);
          expect(ok.status).toBe(200);
          expect(ok.headers.get('ratelimit')).toMatch(/r=\d+/);
        }
        const res = await get('/whoami', limited);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(res.headers.get('ratelimit')).toMatch(/r=0/);
        expect(res.headers.get('ratelimit-policy')).toMatch(/q=2/);
        await expectProblem(res, 429, 'rate_limited');
      });

      it("spends the route's cost from the key's quota, then answers 429 quota_exhausted without Retry-After (no refill)", async () => {
        const metered = auth(fixture.keys.metered);
        for (let i = 0; i < 2; i += 1) expect((await get('/expensive', metered)).status).toBe(200);
        const res = await get('/expensive', metered);
        expect(res.headers.get('retry-after')).toBeNull();
        expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
        const body = await expectProblem(res, 429, 'quota_exhausted');
        expect(body).toMatchObject({ quota_remaining: 1, cost: 2 });
        // A cost-1 route still fits in the last credit.
        expect((await get('/whoami', metered)).status).toBe(200);
      });
    });

    describe('IP allowlists', () => {
      it('refuses a key from outside its allowlist with 403 ip_not_allowed; X-Forwarded-For cannot help without a trusted proxy', async () => {
        for (const headers of [{}, { 'x-forwarded-for': '203.0.113.5' }]) {
          const res = await get('/whoami', { headers: { authorization: `ApiKey ${fixture.keys.elsewhere}`, ...headers } });
          const body = await expectProblem(res, 403, 'ip_not_allowed');
          expect(JSON.stringify(body)).not.toContain(fixture.keys.elsewhere);
        }
      });

      it(adapter.peer === 'unknown' ? 'refuses an allowlisted key when the client address is unknown' : 'accepts a key allowlisted for the socket peer (loopback)', async () => {
        const res = await get('/whoami', auth(fixture.keys.loopback));
        if (adapter.peer === 'unknown') await expectProblem(res, 403, 'ip_not_allowed');
        else expect(res.status).toBe(200);
      });
    });

    describe('options, the same on every adapter', () => {
      it('apiKey({ clientAddress }) names the client the guard sees: a key allowlisted for it is admitted', async () => {
        const res = await get('/options/peer', auth(fixture.keys.elsewhere));
        expect(res.status, `${OPTION_PEER} is in 203.0.113.0/24`).toBe(200);
        expect(await res.json()).toMatchObject({ name: 'elsewhere' });
      });

      it("a guard's trustProxy decides whether X-Forwarded-For is read, and every adapter hands it the header", async () => {
        const elsewhere = (forwardedFor?: string): RequestInit => ({ headers: { authorization: `ApiKey ${fixture.keys.elsewhere}`, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) } });
        // Behind a proxy the guard trusts only a peer it knows: with no socket, no header is believed.
        const behindProxy = await get('/options/proxied', elsewhere('203.0.113.5'));
        if (adapter.peer === 'unknown') await expectProblem(behindProxy, 403, 'ip_not_allowed');
        else expect(behindProxy.status).toBe(200);
        await expectProblem(await get('/options/proxied', elsewhere('198.51.100.1')), 403, 'ip_not_allowed');
        // The default guard trusts no proxy: the same header is not read.
        await expectProblem(await get('/whoami', elsewhere('203.0.113.5')), 403, 'ip_not_allowed');
      });

      it('paginate({ filters: (query, request) }) binds what it reads from the request into the cursor', async () => {
        const tenant = (name: string): RequestInit => ({ headers: { 'x-tenant': name } });
        const first = await get('/options/page?limit=2', tenant('a'));
        expect(first.status).toBe(200);
        const { nextCursor } = (await first.json()) as { nextCursor: string };
        expect((await get(`/options/page?limit=2&cursor=${encodeURIComponent(nextCursor)}`, tenant('a'))).status).toBe(200);
        await expectProblem(await get(`/options/page?limit=2&cursor=${encodeURIComponent(nextCursor)}`, tenant('b')), 400, 'invalid_cursor');
      });

      it("sendPage({ headers }) adds the route's headers; the page's Link and JSON content type win", async () => {
        const res = await get('/options/page?limit=2', { headers: { 'x-tenant': 'a' } });
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.headers.get('link')).toMatch(/rel="next"/);
      });
    });

    describe('outages', () => {
      it('answers an unreachable key store with 503 unavailable, revealing nothing', async () => {
        const before = (await fixture.reports()).length;
        const body = await expectProblem(await get('/down', reader), 503, 'unavailable');
        expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|10\.0\.0\.9/);
        expect((await fixture.reports()).slice(before).map((r) => r.status)).toEqual([503]);
      });
    });

    describe('in-flight limits (the inflight key: one request at a time)', () => {
      const inflight = (): RequestInit => auth(fixture.keys.inflight);
      /**
       * Asks `GET /whoami` as the inflight key until it answers `status`, each answer read to
       * its end (a response whose body nobody reads is still in flight); gives up after 2,000.
       */
      const until = async (status: 200 | 429): Promise<{ status: number; body: string }> => {
        for (let attempt = 0; ; attempt += 1) {
          const res = await get('/whoami', inflight());
          const body = await res.text();
          if (res.status === status || attempt === 2000) return { status: res.status, body };
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };

      /**
       * Sends `path` as the inflight key until it is admitted (not 429 `concurrency_limited`:
       * a lease still held), each answer read to its end; gives up after 2,000 tries.
       */
      const admitted = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: string }> => {
        for (let attempt = 0; ; attempt += 1) {
          const res = await get(path, { ...init, ...inflight(), redirect: 'manual' });
          const body = await res.text();
          if (!(res.status === 429 && body.includes('concurrency_limited')) || attempt === 2000) return { status: res.status, body };
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };

      it('HEAD on a GET route gives its lease back: five in a row, then a GET, each admitted', async () => {
        for (let i = 0; i < 5; i += 1) expect((await admitted('/whoami', { method: 'HEAD' })).status).toBe(200);
        expect((await admitted('/whoami')).status).toBe(200);
      });

      it('every method and status on a capped route gives its lease back when the response ends, whatever its body', async () => {
        for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE']) {
          for (const status of INFLIGHT_STATUSES) {
            const res = await admitted(`/inflight/status?status=${status}`, { method });
            expect(res.status, `${method} answered ${status}`).toBe(status);
            if (method !== 'HEAD' && status !== 204 && status !== 304) expect(res.body).toBe(`status ${status}`);
          }
        }
        expect((await until(200)).status).toBe(200);
      });

      it.each([['/inflight/rejects'], ['/inflight/throws-value'], ['/inflight/rethrown'], ['/inflight/non-error']])(
        '%s: a handler that rejects, or an error handler that rethrows or throws a non-Error, gives its lease back',
        async (path) => {
          for (let i = 0; i < 2; i += 1) {
            // Whatever the framework makes of a failed error handler (a 500, Fastify's reply of the
            // thrown string, a dropped connection), the next request is admitted.
            const res = await get(path, inflight()).catch(() => undefined);
            if (res !== undefined) {
              expect(res.status).not.toBe(429);
              await res.text().catch(() => '');
            }
            expect((await until(200)).status).toBe(200);
          }
        },
      );

      it('a handler that throws gives its lease back: every request of the key is admitted again', async () => {
        for (let i = 0; i < 3; i += 1) {
          const res = await get('/inflight/throws', inflight());
          const text = await res.text();
          expect(res.status, text).toBe(500);
          expect((await until(200)).status).toBe(200);
        }
      });

      const clientGone = adapter.seesClientGone === false ? it.skip : it;

      clientGone('a streamed response holds its lease until its body ends: 429 concurrency_limited with Retry-After meanwhile', async () => {
        const streaming = await get('/inflight/stream', inflight());
        expect(streaming.status).toBe(200);
        const stream = (streaming.body as ReadableStream<Uint8Array>).getReader();
        expect(new TextDecoder().decode((await stream.read()).value)).toBe('chunk 1\n');
        const refused = await get('/whoami', inflight());
        const body = await expectProblem(refused, 429, 'concurrency_limited');
        expect(refused.headers.get('retry-after')).toBe('1');
        expect(body).toMatchObject({ max_in_flight: 1 });
        expect(JSON.stringify(body)).not.toContain(fixture.keys.inflight.slice(-12));
        // Another key is not limited.
        expect(await (await get('/whoami', auth(fixture.keys.reader))).json()).toMatchObject({ name: 'reader' });
        // The client goes away mid-stream: the stream is cancelled and the lease given back.
        await stream.cancel();
        expect((await until(200)).status).toBe(200);
      });

      it('a streamed response read to its end gives its lease back', async () => {
        const res = await get('/inflight/stream?chunks=3', inflight());
        expect(await res.text()).toBe('chunk 1\nchunk 2\nchunk 3\n');
        expect((await until(200)).status).toBe(200);
      });

      clientGone('a client that goes away while the handler works gives its lease back', async () => {
        const controller = new AbortController();
        const slow = get('/inflight/slow', { ...inflight(), signal: controller.signal }).catch((error: unknown) => error);
        // Admitted once the key is refused: the slow request holds the one lease.
        expect(JSON.parse((await until(429)).body)).toMatchObject({ code: 'concurrency_limited' });
        controller.abort();
        // In process (no socket) the handler's late answer still comes back: a client that
        // went away never reads it, as a server cancels the body of a closed connection.
        const late = await slow;
        if (late instanceof Response) await late.body?.cancel();
        expect((await until(200)).status).toBe(200);
      });
    });

    describe('problems', () => {
      it('answers an unknown path with 404 not_found', async () => {
        const body = await expectProblem(await get('/nope?x=1'), 404, 'not_found');
        expect(body.instance).toBe('/nope');
      });

      it('answers a path that is not valid percent-encoded UTF-8 with 400 invalid_request naming the path', async () => {
        // Fastify's router refuses it, Express's fails to decode a `:param`, Hono and `Request`
        // URLs keep it: core's policy decides, the same on every adapter.
        for (const path of ['/items%ZZ', '/nope/%E0%A4%A', '/nope/%E0%A4']) {
          const body = await expectProblem(await get(path, reader), 400, 'invalid_request');
          expect(body, path).toMatchObject({ field: 'path', instance: path, detail: 'The request path is not valid percent-encoded UTF-8.' });
        }
        // The query is not the path: a bad escape there is the parameter's business.
        expect((await get('/public/items?x=%ZZ')).status).toBe(200);
      });

      it('answers a known path with the wrong method with 405 method_not_allowed and Allow', async () => {
        // Before authentication: the method is wrong whoever asks (RFC 9110 §15.5.6).
        const post = await get('/items?limit=1', { method: 'POST', ...reader });
        expect(post.headers.get('allow')).toBe('GET, HEAD');
        const body = await expectProblem(post, 405, 'method_not_allowed');
        expect(body).toMatchObject({ instance: '/items', allowed_methods: ['GET', 'HEAD'] });
        const del = await get('/echo', { method: 'DELETE' });
        expect(del.headers.get('allow')).toBe('POST');
        await expectProblem(del, 405, 'method_not_allowed');
        // GET implies HEAD, and an unknown path stays a 404 whatever the method.
        expect((await get('/whoami', { method: 'HEAD', ...reader })).status).toBe(200);
        await expectProblem(await get('/nope', { method: 'POST' }), 404, 'not_found');
      });

      it('answers a malformed JSON body with 400 invalid_request naming the body', async () => {
        const res = await get('/echo', {
          method: 'POST',
          headers: { authorization: `ApiKey ${fixture.keys.reader}`, 'content-type': 'application/json' },
          body: `{"key": "${fixture.keys.reader}",`,
        });
        const body = await expectProblem(res, 400, 'invalid_request');
        expect(body.field).toBe('body');
        expect(JSON.stringify(body)).not.toContain(fixture.keys.reader);
      });

      it('checks the key before the body: a malformed body with no key or a bad key is 401', async () => {
        const post = (headers: Record<string, string>): RequestInit => ({
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{"a":',
        });
        await expectProblem(await get('/echo', post({})), 401, 'missing_api_key');
        await expectProblem(await get('/echo', post({ authorization: 'ApiKey nope' })), 401, 'invalid_api_key');
      });

      it('accepts a valid JSON body', async () => {
        const res = await get('/echo', {
          method: 'POST',
          headers: { authorization: `ApiKey ${fixture.keys.reader}`, 'content-type': 'application/json' },
          body: '{"a":[1,"✓"]}',
        });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ received: { a: [1, '✓'] } });
      });

      it('answers a server bug with a bare 500 problem and reports the error', async () => {
        const before = (await fixture.reports()).length;
        const res = await get('/throws');
        const body = await expectProblem(res, 500, 'internal_error');
        expect(JSON.stringify(body)).not.toContain('boom');
        const reported = (await fixture.reports()).slice(before);
        expect(reported).toEqual([{ status: 500, message: 'boom: secret detail' }]);
      });
    });
  });
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
