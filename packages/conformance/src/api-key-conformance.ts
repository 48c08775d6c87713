/**
 * The API key checks of the adapter conformance suite: where a key may travel (the
 * `ApiKey` scheme, and Bearer or X-API-Key only where the keyring lists them), the 401s,
 * 403s and 429s with their headers, permissions, rate limits, quotas, IP allowlists, and
 * the 503 of an unreachable key store.
 * Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { REALM } from './fixture.ts';
import { auth } from './conformance-run.ts';
import type { ConformanceRun } from './conformance-run.ts';
import { expectProblem } from './expect-problem.ts';

/** Registers the API key, IP allowlist and key store outage checks. */
export function describeApiKeyConformance(run: ConformanceRun): void {
  const { adapter, get } = run;
  describe('API keys', () => {
    it('exposes the verified key to the handler', async () => {
      const res = await get('/whoami', run.reader);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ name: 'reader', last4: run.fixture.keys.reader.slice(-4), id: expect.any(String) });
      expect(JSON.stringify(body)).not.toContain(run.fixture.keys.reader);
    });

    it('matches the scheme case-insensitively with several spaces', async () => {
      const res = await get('/whoami', { headers: { authorization: `aPiKeY   ${run.fixture.keys.reader}` } });
      expect(res.status).toBe(200);
    });

    it('refuses a key in the query with 400 api_key_in_query, even with a valid header', async () => {
      for (const query of ['api_key=x', 'apikey=x', 'api-key=x', 'access_token=x', `q=${run.fixture.keys.reader}`]) {
        await expectProblem(await get(`/items?${query}`, run.reader), 400, 'api_key_in_query');
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
      const key = run.fixture.keys.reader;
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
      const key = run.fixture.keys.reader;
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
      for (const init of [undefined, { headers: { authorization: `Bearer ${run.fixture.foreignKey}` } }, { headers: { 'x-api-key': 'nope' } }]) {
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
      const { reader: key } = run.fixture.keys;
      const typo = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
      for (const bad of ['nope', typo, run.fixture.foreignKey]) {
        const res = await get('/items', auth(bad));
        expect(res.headers.get('www-authenticate')).toBe(`ApiKey realm="${REALM}"`);
        const body = await expectProblem(res, 401, 'invalid_api_key');
        expect(JSON.stringify(body)).not.toContain(bad);
      }
    });

    it('answers a key without the scope with 403 insufficient_scope and missing_scopes', async () => {
      const body = await expectProblem(await get('/items', auth(run.fixture.keys.writer)), 403, 'insufficient_scope');
      expect(body.missing_scopes).toEqual(['items:read']);
    });

    it('checks apiKey({ permissions }) as a query: either branch of an `or` admits, a role counts, and a 403 names a set that would', async () => {
      for (const [key, name] of [[run.fixture.keys.reader, 'reader'], [run.fixture.keys.auditor, 'auditor']] as const) {
        const res = await get('/permitted', auth(key));
        expect(res.status, name).toBe(200);
        expect(await res.json()).toEqual({ name });
      }
      // writer misses one permission in each branch: the first branch's is named.
      const body = await expectProblem(await get('/permitted', auth(run.fixture.keys.writer)), 403, 'insufficient_scope');
      expect(body.missing_scopes).toEqual(['items:read']);
    });

    it('counts a 403 insufficient_scope against the rate limit and sends the RateLimit headers with it', async () => {
      const remaining = async (): Promise<number> => {
        const res = await get('/items', auth(run.fixture.keys.writer));
        expect(res.status).toBe(403);
        expect(res.headers.get('ratelimit-policy')).toMatch(/q=\d+/);
        return Number(/r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
      };
      const first = await remaining();
      expect(await remaining()).toBe(first - 1);
    });

    it('answers over the per-key limit with 429 rate_limited, Retry-After and RateLimit headers', async () => {
      const limited = auth(run.fixture.keys.limited);
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
      const metered = auth(run.fixture.keys.metered);
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
        const res = await get('/whoami', { headers: { authorization: `ApiKey ${run.fixture.keys.elsewhere}`, ...headers } });
        const body = await expectProblem(res, 403, 'ip_not_allowed');
        expect(JSON.stringify(body)).not.toContain(run.fixture.keys.elsewhere);
      }
    });

    it(adapter.peer === 'unknown' ? 'refuses an allowlisted key when the client address is unknown' : 'accepts a key allowlisted for the socket peer (loopback)', async () => {
      const res = await get('/whoami', auth(run.fixture.keys.loopback));
      if (adapter.peer === 'unknown') await expectProblem(res, 403, 'ip_not_allowed');
      else expect(res.status).toBe(200);
    });
  });

  describe('outages', () => {
    it('answers an unreachable key store with 503 unavailable, revealing nothing', async () => {
      const before = (await run.fixture.reports()).length;
      const body = await expectProblem(await get('/down', run.reader), 503, 'unavailable');
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|10\.0\.0\.9/);
      expect((await run.fixture.reports()).slice(before).map((r) => r.status)).toEqual([503]);
    });
  });
}
