import { ConfigError, isKeysetError, createApiKeyGuard, createKeyAdmin, createKeyring, createMemoryKeyStore, createRateLimiter } from '@keyset/core';
import type { ApiKeyGuard, KeyStore, VerifiedKey } from '@keyset/core';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { apiKey, problemHandler } from './index.ts';
import { createConformanceFixture, expectProblem } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

const auth = (key: string): RequestInit => ({ headers: { authorization: `ApiKey ${key}` } });

describe('apiKey() for Hono', () => {
  it("throws the guard's refusal as it is: app.onError(problemHandler()) renders and reports it once, with the RateLimit headers of an admitted key; an app's own onError sees the KeysetError itself", async () => {
    const reported: unknown[] = [];
    const app = new Hono();
    app.onError(problemHandler({ onError: (error, _c, status) => reported.push([(error as { code?: string }).code, status]) }));
    app.get('/', apiKey({ guard: fixture.guard, scopes: ['items:read'] }), (c) => c.text('ok'));
    const missing = await app.request('/');
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    await expectProblem(missing, 401, 'missing_api_key');
    const scope = await app.request('/', auth(fixture.keys.writer));
    expect(scope.headers.get('ratelimit')).toMatch(/r=\d+/);
    await expectProblem(scope, 403, 'insufficient_scope');
    expect(reported).toEqual([['missing_api_key', 401], ['insufficient_scope', 403]]);
    const own = new Hono();
    own.get('/', apiKey({ guard: fixture.guard }), (c) => c.text('ok'));
    own.onError((error, c) => (isKeysetError(error) ? c.json({ mine: error.code }, 418) : c.text('other', 500)));
    const replaced = await own.request('/');
    expect(replaced.status).toBe(418);
    expect(await replaced.json()).toEqual({ mine: 'missing_api_key' });
  });

  it('types c.var.apiKey and c.get("apiKey") as the core VerifiedKey', async () => {
    const app = new Hono();
    app.get('/', apiKey({ guard: fixture.guard }), (c) => {
      expectTypeOf(c.var.apiKey).toEqualTypeOf<VerifiedKey>();
      expectTypeOf(c.get('apiKey')).toEqualTypeOf<VerifiedKey>();
      return c.text(c.get('apiKey').name);
    });
    expect(await (await app.request('/', auth(fixture.keys.reader))).text()).toBe('reader');
  });

  it('passes the raw Authorization header, the request URL and the scopes to the guard', async () => {
    const calls: unknown[][] = [];
    const guard: ApiKeyGuard = {
      check: async (...args) => {
        calls.push(args);
        const key = { id: 'k', name: 'n', scopes: [], rateLimit: null, rateLimits: null, quota: null, environment: 'e', metadata: {}, ipAllowlist: null, ownerId: null, owner: null, last4: 'abcd' };
        return { key, headers: { ratelimit: '"default";r=1;t=1' }, clientAddress: undefined };
      },
    };
    const scopes = ['a:read'];
    const app = new Hono();
    app.get('/x', apiKey({ guard, scopes, cost: 3, route: 'GET /x' }), (c) => c.text('ok'));
    scopes.push('mutated:after-creation');
    await app.request('http://h/x?y=1', { headers: { authorization: 'ApiKey  abc', 'x-forwarded-for': '198.51.100.7' } });
    await app.request('http://h/x');
    // app.request has no socket: the address is unknown, not made up.
    expect(calls).toEqual([
      [{ authorization: 'ApiKey  abc', xApiKey: null, url: 'http://h/x?y=1', remoteAddress: undefined, forwardedFor: '198.51.100.7' }, { scopes: ['a:read'], cost: 3, route: 'GET /x' }],
      [{ authorization: null, xApiKey: null, url: 'http://h/x', remoteAddress: undefined, forwardedFor: null }, { scopes: ['a:read'], cost: 3, route: 'GET /x' }],
    ]);
  });

  it('sets RateLimit headers on a Response the handler built itself', async () => {
    const app = new Hono();
    app.get('/', apiKey({ guard: fixture.guard }), () => new Response('raw', { headers: { 'x-own': '1' } }));
    const res = await app.request('/', auth(fixture.keys.reader));
    expect(res.headers.get('x-own')).toBe('1');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toMatch(/q=1000000/);
  });

  it('keeps a header the handler chose over the guard', async () => {
    const app = new Hono();
    app.get('/', apiKey({ guard: fixture.guard }), (c) => c.text('x', 200, { ratelimit: 'mine' }));
    expect((await app.request('/', auth(fixture.keys.reader))).headers.get('ratelimit')).toBe('mine');
  });

  it('answers 503 unavailable when the key store is down', async () => {
    const memory = createMemoryKeyStore();
    let down = false;
    const store: KeyStore = {
      ...Object.fromEntries(Object.entries(memory)),
      findByDigest: (digest) => (down ? Promise.reject(new Error('connection refused')) : memory.findByDigest(digest)),
    } as KeyStore;
    const keyring = createKeyring({ store, prefix: 'down_test', cache: false });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'k', scopes: [] });
    down = true;
    const app = new Hono();
    app.get('/', apiKey({ guard: createApiKeyGuard({ keyring }) }), (c) => c.text('ok'));
    const reported: number[] = [];
    app.onError(problemHandler({ onError: (_e, _c, status) => reported.push(status) }));
    const body = await expectProblem(await app.request('/', auth(key)), 503, 'unavailable');
    expect(JSON.stringify(body)).not.toContain('connection refused');
    expect(reported).toEqual([503]);
    await keyring.close();
  });

  it('answers 503 when the rate-limit store is down and onStoreError is closed', async () => {
    const limiter = createRateLimiter({
      defaultPolicy: { limit: 10, windowSeconds: 60 },
      onStoreError: 'closed',
      store: { decide: () => Promise.reject(new Error('redis down')) },
      logger: { warn: () => {} },
    });
    const app = new Hono();
    app.get('/', apiKey({ guard: createApiKeyGuard({ keyring: fixture.keyring, limiter }) }), (c) => c.text('ok'));
    app.onError(problemHandler());
    await expectProblem(await app.request('/', auth(fixture.keys.reader)), 503, 'unavailable');
  });

  it('settles after a next() that returns nothing or a bare thenable, as an async middleware awaiting it did', async () => {
    const nexts: [string, (ran: () => void) => () => Promise<void>][] = [
      ['nothing', (ran) => () => (ran(), undefined) as never],
      // A thenable whose then() answers nothing (not a promise), calling back at once.
      ['bare thenable', (ran) => () => ({ then: (ok: () => void) => void (ran(), ok()) }) as never],
    ];
    for (const [name, makeNext] of nexts) {
      const middleware = apiKey({ guard: fixture.guard });
      const app = new Hono();
      app.get('/', async (c) => {
        let ranNext = false;
        const returned = middleware(c, makeNext(() => (ranNext = c.var.apiKey !== undefined)));
        expect(returned).toBeInstanceOf(Promise);
        const outcome = await (returned as Promise<unknown>).then(
          (value) => `resolved ${String(value)} after next: ${ranNext}`,
          (error: unknown) => `rejected ${String(error)}`,
        );
        return c.text(outcome);
      });
      expect(`${name}: ${await (await app.request('/', auth(fixture.keys.reader))).text()}`).toBe(`${name}: resolved undefined after next: true`);
    }
  });

  it("returns a promise as an async middleware would: rejected with the guard's KeysetError, never thrown, when refused; resolved with nothing after the chain", async () => {
    // A guard answering at once (the twin), one answering later, and one giving a non-native thenable.
    const later: ApiKeyGuard = { check: async (request, options) => fixture.guard.check(request, options) };
    const thenable: ApiKeyGuard = { check: (request, options) => ({ then: (ok: (v: unknown) => void, fail: (e: unknown) => void) => fixture.guard.check(request, options).then(ok, fail) }) as never };
    for (const guard of [fixture.guard, later, thenable]) {
      const middleware = apiKey({ guard });
      const app = new Hono();
      app.get('/', async (c) => {
        let ranNext = false;
        let returned: unknown;
        try {
          returned = middleware(c, async () => {
            ranNext = true;
          });
        } catch {
          return c.text('threw');
        }
        expect(returned).toBeInstanceOf(Promise);
        const outcome = await (returned as Promise<unknown>).then(
          (value) => `resolved ${String(value)} after next: ${ranNext}`,
          (error: { code?: string; status?: number }) => `rejected ${error.code} ${error.status}`,
        );
        return c.text(outcome);
      });
      expect(await (await app.request('/')).text()).toBe('rejected missing_api_key 401');
      expect(await (await app.request('/', auth(fixture.keys.reader))).text()).toBe('resolved undefined after next: true');
    }
  });

  it('hands X-Forwarded-For to a guard that trusts a proxy, and to any guard of your own, whatever its check', async () => {
    const behindProxy = createApiKeyGuard({ keyring: fixture.keyring, trustProxy: { cidrs: ['10.0.0.0/8'] } });
    const app = new Hono();
    app.onError(problemHandler());
    app.get('/', apiKey({ guard: behindProxy, clientAddress: () => '10.0.0.1' }), (c) => c.text(c.var.apiKey.name));
    const elsewhere = { authorization: `ApiKey ${fixture.keys.elsewhere}` };
    // The proxy at 10.0.0.1 says the client is 203.0.113.5, inside the key's allowlist.
    expect(await (await app.request('/', { headers: { ...elsewhere, 'x-forwarded-for': '203.0.113.5' } })).text()).toBe('elsewhere');
    await expectProblem(await app.request('/', { headers: elsewhere }), 403, 'ip_not_allowed');
    // A guard of your own built on a check that ignores the header, then given one that reads it.
    const seen: unknown[] = [];
    const plain = createApiKeyGuard({ keyring: fixture.keyring });
    const own: { check: ApiKeyGuard['check'] } = { check: plain.check };
    const mine = new Hono();
    mine.get('/', apiKey({ guard: own }), (c) => c.text('ok'));
    await mine.request('/', { headers: { ...auth(fixture.keys.reader).headers, 'x-forwarded-for': '198.51.100.1' } as Record<string, string> });
    own.check = (request, options) => {
      seen.push(request.forwardedFor);
      return plain.check(request, options);
    };
    await mine.request('/', { headers: { ...auth(fixture.keys.reader).headers, 'x-forwarded-for': '198.51.100.2' } as Record<string, string> });
    expect(seen).toEqual(['198.51.100.2']);
  });

  it('refuses to be created without a guard', () => {
    expect(() => apiKey({} as never)).toThrow(ConfigError);
    expect(() => apiKey({ guard: {} } as never)).toThrow(ConfigError);
    expect(() => apiKey({ guard: fixture.guard, scopes: ['has space'] })).toThrow(ConfigError);
    expect(() => apiKey({ guard: fixture.guard, scopes: 'orders:read' as never })).toThrow(ConfigError);
    for (const cost of [-1, 0.5, 1_000_001, '2' as never]) expect(() => apiKey({ guard: fixture.guard, cost })).toThrow(/cost/);
    expect(() => apiKey({ guard: fixture.guard, route: '' })).toThrow(/route/);
  });
});
