import { ConfigError, createApiKeyGuard, createKeyAdmin, createKeyring, createMemoryKeyStore } from '@keyset/core';
import type { ApiKeyGuard, KeyStore, VerifiedKey } from '@keyset/core';
import express from 'express';
import type { Express } from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createConformanceFixture, expectProblem, rawOverSocket } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { apiKey, checkRequest, problemHandler } from './index.ts';
import { listen } from './testing/listen.ts';

let fixture: ConformanceFixture;
const servers: { close(): Promise<void> }[] = [];
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => fixture.close());

async function serve(app: Express, onError?: (error: unknown, status: number) => void): Promise<string> {
  app.use(problemHandler(onError === undefined ? {} : { onError: (error, _req, status) => onError(error, status) }));
  const server = await listen(app);
  servers.push(server);
  return server.origin;
}

const auth = (key: string): RequestInit => ({ headers: { authorization: `ApiKey ${key}` } });

describe('apiKey() for Express', () => {
  it("passes the guard's refusal to next(error): problemHandler() renders and reports it once, with the RateLimit headers of an admitted key; an app's own error handler sees the KeysetError and may replace it", async () => {
    const reported: unknown[] = [];
    const app = express();
    app.get('/', apiKey({ guard: fixture.guard, scopes: ['items:read'] }), (_req, res) => res.end('ok'));
    const origin = await serve(app, (error, status) => reported.push([(error as { code?: string }).code, status]));
    const missing = await fetch(origin);
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    await expectProblem(missing, 401, 'missing_api_key');
    const scope = await fetch(origin, auth(fixture.keys.writer));
    expect(scope.headers.get('ratelimit')).toMatch(/r=\d+/);
    await expectProblem(scope, 403, 'insufficient_scope');
    expect(reported).toEqual([['missing_api_key', 401], ['insufficient_scope', 403]]);
    const own = express();
    own.get('/', apiKey({ guard: fixture.guard }), (_req, res) => res.end('ok'));
    own.use((error: { code?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(418).json({ mine: error.code });
    });
    const ownServer = await listen(own);
    servers.push(ownServer);
    const replaced = await fetch(ownServer.origin);
    expect(replaced.status).toBe(418);
    expect(await replaced.json()).toEqual({ mine: 'missing_api_key' });
  });

  it('types res.locals.apiKey as the core VerifiedKey', async () => {
    const app = express();
    app.get('/', apiKey({ guard: fixture.guard }), (_req, res) => {
      expectTypeOf(res.locals.apiKey).toEqualTypeOf<VerifiedKey>();
      res.send(res.locals.apiKey.name);
    });
    expect(await (await fetch(await serve(app), auth(fixture.keys.reader))).text()).toBe('reader');
  });

  it('passes every Authorization line, the request target, the socket address, X-Forwarded-For and the scopes to the guard', async () => {
    const calls: unknown[][] = [];
    const guard: ApiKeyGuard = {
      check: async (...args) => {
        calls.push(args);
        const key = { id: 'k', name: 'n', scopes: [], rateLimit: null, rateLimits: null, quota: null, environment: 'e', metadata: {}, ipAllowlist: null, ownerId: null, owner: null, last4: 'abcd' };
        return { key, headers: {}, clientAddress: undefined };
      },
    };
    const scopes = ['a:read'];
    const app = express();
    app.get('/x', apiKey({ guard, scopes, cost: 3, route: 'GET /x' }), (_req, res) => res.end());
    scopes.push('mutated:after-creation');
    const origin = await serve(app);
    await fetch(`${origin}/x?y=1`, { headers: { authorization: 'ApiKey  abc', 'x-forwarded-for': '198.51.100.7, 10.0.0.1' } });
    await fetch(`${origin}/x`);
    const loopback = expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$|^::1$/);
    expect(calls).toEqual([
      [{ authorization: ['ApiKey  abc'], url: '/x?y=1', remoteAddress: loopback, forwardedFor: '198.51.100.7, 10.0.0.1' }, { scopes: ['a:read'], cost: 3, route: 'GET /x' }],
      [{ authorization: undefined, url: '/x', remoteAddress: loopback, forwardedFor: undefined }, { scopes: ['a:read'], cost: 3, route: 'GET /x' }],
    ]);
  });

  it('still sees the query when the Host header is unusable', async () => {
    const app = express();
    app.get('/x', apiKey({ guard: fixture.guard }), (_req, res) => res.end());
    const origin = await serve(app);
    const res = await rawOverSocket(origin)('GET', '/x?api_key=abc', [['host', 'a b'], ['authorization', `ApiKey ${fixture.keys.reader}`]]);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'api_key_in_query' });
  });

  it('sets RateLimit headers on success responses', async () => {
    const app = express();
    app.get('/', apiKey({ guard: fixture.guard }), (_req, res) => res.json({ ok: true }));
    const res = await fetch(await serve(app), auth(fixture.keys.reader));
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toMatch(/q=1000000/);
  });

  it('gives the in-flight lease back when the client went away while the guard was deciding', async () => {
    let letGuardAnswer!: () => void;
    const clientGone = new Promise<void>((resolve) => (letGuardAnswer = resolve));
    const slowGuard: ApiKeyGuard = {
      check: async (request, options) => {
        await clientGone;
        return fixture.guard.check(request, options);
      },
    };
    const app = express();
    app.get('/slow', apiKey({ guard: slowGuard }), (_req, res) => res.end('late'));
    app.get('/now', apiKey({ guard: fixture.guard }), (_req, res) => res.end('ok'));
    const origin = await serve(app);
    const controller = new AbortController();
    const slow = fetch(`${origin}/slow`, { ...auth(fixture.keys.inflight), signal: controller.signal }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await slow;
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The response closed before the guard admitted the request with its one lease.
    letGuardAnswer();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      const res = await fetch(`${origin}/now`, auth(fixture.keys.inflight));
      statuses.push(res.status);
      await res.text();
      if (res.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(statuses.at(-1), statuses.join(' ')).toBe(200);
  });

  it('answers 503 unavailable when the key store is down', async () => {
    const memory = createMemoryKeyStore();
    let down = false;
    const store = {
      ...Object.fromEntries(Object.entries(memory)),
      findByDigest: (digest: string) => (down ? Promise.reject(new Error('connection refused')) : memory.findByDigest(digest)),
    } as KeyStore;
    const keyring = createKeyring({ store, prefix: 'down_test', cache: false });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'k', scopes: [] });
    down = true;
    const app = express();
    app.use(checkRequest());
    app.get('/', apiKey({ guard: createApiKeyGuard({ keyring }) }), (_req, res) => res.end());
    const reported: number[] = [];
    const body = await expectProblem(await fetch(await serve(app, (_e, status) => reported.push(status)), auth(key)), 503, 'unavailable');
    expect(JSON.stringify(body)).not.toContain('connection refused');
    expect(reported).toEqual([503]);
    await keyring.close();
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
