import { ConfigError, createApiKeyGuard } from '@keyset/core';
import type { ApiKeyGuard, VerifiedKey } from '@keyset/core';
import { createConformanceFixture, expectProblem } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { apiKey, paginate, problemHandler } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

const authed = (key: string, init: RequestInit = {}): Request =>
  new Request('http://localhost/orders', { ...init, headers: { authorization: `ApiKey ${key}` } });

describe('apiKey()', () => {
  it("hands the key to the handler and carries the platform's arguments through (Worker env, Next.js context)", async () => {
    interface Env {
      REGION: string;
    }
    const worker = apiKey({ guard: fixture.guard })((_request, key, env: Env, ctx: { params: Promise<{ id: string }> }) => {
      expectTypeOf(key).toEqualTypeOf<VerifiedKey>();
      return ctx.params.then(({ id }) => Response.json({ name: key.name, region: env.REGION, id }));
    });
    expectTypeOf(worker).parameters.toEqualTypeOf<[Request, Env, { params: Promise<{ id: string }> }]>();
    const res = await worker(authed(fixture.keys.reader), { REGION: 'eu' }, { params: Promise.resolve({ id: '7' }) });
    expect(await res.json()).toEqual({ name: 'reader', region: 'eu', id: '7' });
  });

  it('adds the RateLimit headers to a response whose headers are immutable, keeping status and body', async () => {
    // Response.redirect() has immutable headers, like a Response from fetch().
    const handler = apiKey({ guard: fixture.guard })(() => Response.redirect('http://localhost/elsewhere', 307));
    const res = await handler(authed(fixture.keys.reader));
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe('http://localhost/elsewhere');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toEqual(expect.any(String));
  });

  it("keeps a RateLimit header the handler set itself", async () => {
    const handler = apiKey({ guard: fixture.guard })(() => new Response('ok', { headers: { ratelimit: 'mine' } }));
    expect((await handler(authed(fixture.keys.reader))).headers.get('ratelimit')).toBe('mine');
  });

  it('never calls the handler for a refused request: the refusal is thrown, and the outer problemHandler() renders and reports it once', async () => {
    let called = 0;
    const handler = apiKey({ guard: fixture.guard, scopes: ['items:read'] })(() => {
      called += 1;
      return new Response('ok');
    });
    await expect(handler(new Request('http://localhost/orders'))).rejects.toMatchObject({ code: 'missing_api_key', status: 401 });
    const reported: unknown[] = [];
    const route = problemHandler({ typeBase: 'https://errors.example.com/', onError: (error, _request, status) => reported.push([(error as { code?: string }).code, status]) })(handler);
    const missing = await route(new Request('http://localhost/orders'));
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    await expectProblem(missing, 401, 'missing_api_key');
    const body = await expectProblem(await route(authed(fixture.keys.writer)), 403, 'insufficient_scope');
    expect(body).toMatchObject({ instance: '/orders', type: 'https://errors.example.com/insufficient_scope' });
    expect(reported).toEqual([['missing_api_key', 401], ['insufficient_scope', 403]]);
    expect(called).toBe(0);
  });

  it("lets a keyset error the handler throws (paginate()'s 400) go up to problemHandler(), which answers it with the guard's RateLimit headers; an app's own wrapper in between sees the error", async () => {
    const handler = apiKey({ guard: fixture.guard })(async (request) => {
      await paginate(request, fixture.paginator);
      return new Response('ok');
    });
    const seen: unknown[] = [];
    const own = async (request: Request): Promise<Response> => {
      try {
        return await handler(request);
      } catch (error) {
        seen.push((error as { code?: string }).code);
        throw error;
      }
    };
    const route = problemHandler()(own);
    const res = await route(new Request('http://localhost/items?limit=abc', { headers: { authorization: `ApiKey ${fixture.keys.reader}` } }));
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    await expectProblem(res, 400, 'invalid_limit');
    expect(seen).toEqual(['invalid_limit']);
  });

  it('keeps the RateLimit headers on a problem thrown after authentication', async () => {
    const handler = problemHandler()(apiKey({ guard: fixture.guard })(() => {
        throw new Error('boom');
      }));
    const res = await handler(authed(fixture.keys.reader));
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    await expectProblem(res, 500, 'internal_error');
  });

  it("passes the raw Authorization, the URL, the platform's socket peer and X-Forwarded-For to the guard", async () => {
    const calls: unknown[] = [];
    const guard: ApiKeyGuard = {
      check: async (request) => {
        calls.push(request);
        const key = { id: 'k', name: 'n', scopes: [], rateLimit: null, rateLimits: null, quota: null, environment: 'e', metadata: {}, ipAllowlist: null, ownerId: null, owner: null, last4: 'abcd' };
        return { key, headers: {}, clientAddress: undefined };
      },
    };
    interface Server {
      requestIP(request: Request): { address: string } | null;
    }
    const server: Server = { requestIP: () => ({ address: '192.0.2.1' }) };
    const withPeer = apiKey({ guard, clientAddress: (request, s: Server) => s.requestIP(request)?.address })((_request: Request, _key: VerifiedKey, _server: Server) => new Response('ok'));
    await withPeer(new Request('http://h/x?y=1', { headers: { authorization: 'ApiKey  abc', 'x-forwarded-for': '198.51.100.7' } }), server);
    // Without clientAddress the peer is unknown, not made up.
    await apiKey({ guard })(() => new Response('ok'))(new Request('http://h/x'));
    expect(calls).toEqual([
      { authorization: 'ApiKey  abc', url: 'http://h/x?y=1', remoteAddress: '192.0.2.1', forwardedFor: '198.51.100.7', xApiKey: null },
      { authorization: null, url: 'http://h/x', remoteAddress: undefined, forwardedFor: null, xApiKey: null },
    ]);
  });

  it('returns a promise as an async handler would: never thrown; a refusal or a handler failure rejected', async () => {
    // A guard answering at once (the twin), one answering later, and one giving a non-native thenable.
    const later: ApiKeyGuard = { check: async (request, options) => fixture.guard.check(request, options) };
    const thenable: ApiKeyGuard = { check: (request, options) => ({ then: (ok: (v: unknown) => void, fail: (e: unknown) => void) => fixture.guard.check(request, options).then(ok, fail) }) as never };
    for (const guard of [fixture.guard, later, thenable]) {
      const outcome = (returned: Promise<Response>) => returned.then((res) => `status ${res.status}`, (error: { code?: string; message?: string }) => `rejected ${error.code ?? error.message}`);
      const served = apiKey({ guard })(() => new Response('ok'));
      const throwing = apiKey({ guard })(() => {
        throw new Error('handler failed');
      });
      const withKey = new Request('http://localhost/', { headers: { authorization: `ApiKey ${fixture.keys.reader}` } });
      let returned: Promise<Response> | undefined;
      expect(() => (returned = served(new Request('http://localhost/')))).not.toThrow();
      expect(await outcome(returned!)).toBe('rejected missing_api_key');
      expect(await outcome(served(withKey.clone()))).toBe('status 200');
      expect(() => (returned = throwing(withKey.clone()))).not.toThrow();
      expect(await outcome(returned!)).toBe('rejected handler failed');
    }
  });

  it('hands X-Forwarded-For to a guard that trusts a proxy, and to any guard of your own, whatever its check', async () => {
    const behindProxy = createApiKeyGuard({ keyring: fixture.keyring, trustProxy: { cidrs: ['10.0.0.0/8'] } });
    const route = problemHandler()(apiKey({ guard: behindProxy, clientAddress: () => '10.0.0.1' })((_request, key) => new Response(key.name)));
    const elsewhere = (headers: Record<string, string> = {}) =>
      new Request('http://localhost/orders', { headers: { authorization: `ApiKey ${fixture.keys.elsewhere}`, ...headers } });
    // The proxy at 10.0.0.1 says the client is 203.0.113.5, inside the key's allowlist.
    expect(await (await route(elsewhere({ 'x-forwarded-for': '203.0.113.5' }))).text()).toBe('elsewhere');
    await expectProblem(await route(elsewhere()), 403, 'ip_not_allowed');
    // A guard of your own built on a check that ignores the header, then given one that reads it.
    const seen: unknown[] = [];
    const plain = createApiKeyGuard({ keyring: fixture.keyring });
    const own: { check: ApiKeyGuard['check'] } = { check: plain.check };
    const mine = apiKey({ guard: own })(() => new Response('ok'));
    const reader = (forwardedFor: string) =>
      new Request('http://localhost/orders', { headers: { authorization: `ApiKey ${fixture.keys.reader}`, 'x-forwarded-for': forwardedFor } });
    await mine(reader('198.51.100.1'));
    own.check = (request, options) => {
      seen.push(request.forwardedFor);
      return plain.check(request, options);
    };
    await mine(reader('198.51.100.2'));
    expect(seen).toEqual(['198.51.100.2']);
  });

  it('refuses a bad configuration when the route is built', () => {
    const ok = (): Response => new Response();
    expect(() => apiKey({} as never)(ok)).toThrow(ConfigError);
    expect(() => apiKey({ guard: fixture.guard, scopes: ['orders read'] })(ok)).toThrow(/scope tokens/);
    expect(() => apiKey({ guard: fixture.guard })(undefined as never)).toThrow(/handler/);
    expect(() => apiKey({ guard: fixture.guard, clientAddress: '127.0.0.1' as never })(ok)).toThrow(/clientAddress/);
  });
});
