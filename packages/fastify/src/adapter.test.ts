import { connect } from 'node:net';
import { ConfigError, paginateArray } from '@keyset/core';
import type { PagePlan, VerifiedKey } from '@keyset/core';
import { createConformanceFixture, expectProblem } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { apiKey, keyset, notFoundHandler, paginate, problemHandler, sendPage } from './index.ts';
import type { KeysetPluginOptions } from './index.ts';

let fixture: ConformanceFixture;
const apps: FastifyInstance[] = [];
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(() => fixture.close());

/** A listening app with the plugin, routes added by `routes`; resolves its origin. */
async function serve(
  routes: (app: FastifyInstance) => void,
  options: { server?: FastifyServerOptions; plugin?: KeysetPluginOptions } = {},
): Promise<string> {
  const app = Fastify(options.server ?? {});
  apps.push(app);
  await app.register(keyset, options.plugin ?? {});
  routes(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}

const auth = (key: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { authorization: `ApiKey ${key}`, ...(init.headers as Record<string, string>) },
});

function rawGet(origin: string, target: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.end([`GET ${target} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'connection: close', '', ''].join('\r\n'));
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve({ status: Number(data.split(' ')[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) }));
  });
}

describe('apiKey() in onRequest: the key before the body', () => {
  it('refuses a keyless request with a body over the limit as 401, never reading the body (not 413)', async () => {
    let parsed = 0;
    const origin = await serve(
      (app) => {
        app.addHook('preValidation', async () => {
          parsed += 1;
        });
        app.post('/upload', { onRequest: apiKey({ guard: fixture.guard }) }, async (request) => ({ size: JSON.stringify(request.body).length }));
      },
      { server: { bodyLimit: 100 } },
    );
    const big = JSON.stringify({ data: 'x'.repeat(10_000) });
    const post = (init: RequestInit = {}): RequestInit => ({ method: 'POST', body: big, ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
    await expectProblem(await fetch(`${origin}/upload`, post()), 401, 'missing_api_key');
    expect(parsed).toBe(0);
    // With a valid key the body is read, and Fastify's 413 becomes a problem with that status.
    const res = await fetch(`${origin}/upload`, post(auth(fixture.keys.reader)));
    expect(res.headers.get('ratelimit')).toEqual(expect.any(String));
    await expectProblem(res, 413, 'invalid_request');
  });

  it('also works as a preHandler hook, after the body is parsed', async () => {
    const origin = await serve((app) => {
      app.post('/late', { preHandler: apiKey({ guard: fixture.guard }) }, async (request) => ({ name: request.apiKey.name, body: request.body }));
    });
    const res = await fetch(`${origin}/late`, auth(fixture.keys.reader, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }));
    expect(await res.json()).toEqual({ name: 'reader', body: { a: 1 } });
  });

  it('types request.apiKey, request.page and sendPage(reply, )', () => {
    const app = Fastify();
    app.get('/typed', async (request, reply) => {
      expectTypeOf(request.apiKey).toEqualTypeOf<VerifiedKey>();
      expectTypeOf(request.page).toEqualTypeOf<PagePlan>();
      expectTypeOf(sendPage<{ id: number }>(reply, [])).toEqualTypeOf<Promise<FastifyReply>>();
      return null;
    });
    return app.close();
  });

  it('refuses a bad configuration when the route is built', () => {
    expect(() => apiKey({} as never)).toThrow(ConfigError);
    expect(() => apiKey({ guard: fixture.guard, scopes: ['a b'] })).toThrow(/scope tokens/);
    expect(() => paginate({} as never)).toThrow(ConfigError);
    expect(() => paginate(fixture.paginator, { filters: {} as never })).toThrow(ConfigError);
    expect(() => paginate(fixture.paginator, { baseUrl: 'nope' })).toThrow(ConfigError);
  });
});

describe("Fastify's own client errors are problems with Fastify's status", () => {
  it('maps empty and malformed JSON, unsupported media types and schema validation', async () => {
    const origin = await serve((app) => {
      app.post(
        '/things',
        { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
        async (request) => request.body,
      );
    });
    const post = (body: string, type = 'application/json'): Promise<Response> =>
      fetch(`${origin}/things`, { method: 'POST', headers: { 'content-type': type }, body });
    expect(await expectProblem(await post(''), 400, 'invalid_request')).toMatchObject({ field: 'body', instance: '/things' });
    expect(await expectProblem(await post('{"name":'), 400, 'invalid_request')).toMatchObject({ field: 'body' });
    await expectProblem(await post('name=x', 'application/x-www-form-urlencoded'), 415, 'invalid_request');
    const invalid = await expectProblem(await post('{"other":1}'), 400, 'invalid_request');
    expect(invalid.detail).toMatch(/name/);
    expect((await post('{"name":"ok"}')).status).toBe(200);
  });

  it('needs frameworkErrors: problemHandler() for a bad URL encoding, answered in core\'s words', async () => {
    const origin = await serve(() => {}, { server: { frameworkErrors: problemHandler() } });
    const body = await expectProblem(await fetch(`${origin}/items/%zz`), 400, 'invalid_request');
    // Fastify's message is "'/items/%zz' is not a valid url component": the path, client text.
    expect(body).toEqual(expect.objectContaining({ detail: 'The request path is not valid percent-encoded UTF-8.', field: 'path', instance: '/items/%zz' }));
  });

  it("never sends Fastify's own message, which quotes the request: our wording, a field, Fastify's status", async () => {
    const marker = 'QUOTED-BY-FASTIFY';
    const origin = await serve((app) => {
      app.get('/items/:id', async (request) => request.params);
      app.post('/things', { schema: { body: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (request) => request.body);
      // An FST_ code this adapter does not know, its message quoting the client as Fastify's do.
      app.get('/odd', async () => {
        throw Object.assign(new Error(`'${marker}' is odd`), { code: 'FST_ERR_SOMETHING_NEW', statusCode: 400 });
      });
      // An app's own 4xx is written for the client: its message stays the detail.
      app.get('/own', async () => {
        throw Object.assign(new Error('Pick a date after 2020.'), { statusCode: 422 });
      });
    }, { server: { frameworkErrors: problemHandler() } });
    const long = await fetch(`${origin}/items/${marker}${'x'.repeat(120)}`);
    const longBody = await expectProblem(long, 414, 'invalid_request');
    expect(longBody).toMatchObject({ field: 'path', detail: 'A path parameter is longer than this route accepts.' });
    expect(longBody.detail).not.toContain(marker);
    const typed = await fetch(`${origin}/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"n":"${marker}"}` });
    expect(await expectProblem(typed, 400, 'invalid_request')).toMatchObject({ field: 'body.n', detail: '`body.n` must be integer.' });
    const odd = await expectProblem(await fetch(`${origin}/odd`), 400, 'invalid_request');
    expect(odd.detail).toBe('The request could not be processed.');
    expect(await expectProblem(await fetch(`${origin}/own`), 422, 'invalid_request')).toMatchObject({ detail: 'Pick a date after 2020.' });
  });
});

describe('the plugin and the handlers', () => {
  it('uses typeBase and reports through onError, even when onError throws', async () => {
    const statuses: number[] = [];
    const origin = await serve(
      (app) => {
        app.get('/boom', async () => {
          throw new Error('boom');
        });
      },
      {
        plugin: {
          typeBase: 'https://errors.example.com/',
          onError: (_error, _request, status) => {
            statuses.push(status);
            throw new Error('logger down');
          },
        },
      },
    );
    const body = await expectProblem(await fetch(`${origin}/boom`), 500, 'internal_error');
    expect(body.type).toBe('https://errors.example.com/internal_error');
    expect(statuses).toEqual([500]);
    expect((await expectProblem(await fetch(`${origin}/nope`), 404, 'not_found')).type).toBe('https://errors.example.com/not_found');
  });

  it("answers a refusal with the plugin's problem handler; an app's own error handler sees it and may replace it, and what it rethrows is keyset's to answer", async () => {
    const origin = await serve((app) => {
      app.get('/plain', { onRequest: apiKey({ guard: fixture.guard, scopes: ['items:read'] }) }, async () => 'ok');
      void app.register(async (child) => {
        child.setErrorHandler((error: { code?: string }, _request, reply) => {
          if (error.code === 'missing_api_key') return reply.code(418).send({ mine: error.code });
          throw error;
        });
        child.get('/own', { onRequest: apiKey({ guard: fixture.guard, scopes: ['items:read'] }) }, async () => 'ok');
      });
    });
    const missing = await fetch(`${origin}/plain`);
    expect(missing.headers.get('www-authenticate')).toMatch(/^ApiKey realm=/);
    await expectProblem(missing, 401, 'missing_api_key');
    const replaced = await fetch(`${origin}/own`);
    expect(replaced.status).toBe(418);
    expect(await replaced.json()).toEqual({ mine: 'missing_api_key' });
    const rethrown = await fetch(`${origin}/own`, auth(fixture.keys.writer));
    expect(rethrown.headers.get('ratelimit')).toMatch(/r=\d+/);
    await expectProblem(rethrown, 403, 'insufficient_scope');
  });

  it('leaves the handlers to the app with handlers: false', async () => {
    const origin = await serve(
      (app) => {
        app.setNotFoundHandler(notFoundHandler({ typeBase: 'urn:mine:' }));
        app.get('/x', async () => 'x');
      },
      { plugin: { handlers: false } },
    );
    const res = await fetch(`${origin}/nope`);
    expect((await expectProblem(res, 404, 'not_found')).type).toBe('urn:mine:not_found');
  });

  it('answers 405 with Allow for a parametric path known under other methods', async () => {
    const origin = await serve((app) => {
      app.get('/things/:id', async () => ({}));
      app.delete('/things/:id', async (_request, reply) => reply.code(204).send());
    });
    const res = await fetch(`${origin}/things/7`, { method: 'PUT' });
    expect(res.headers.get('allow')).toBe('GET, HEAD, DELETE');
    await expectProblem(res, 405, 'method_not_allowed');
  });

  it('answers 405 for every method the app serves, its own addHttpMethod() ones included', async () => {
    const origin = await serve((app) => {
      app.addHttpMethod('PROPFIND', { hasBody: true });
      app.addHttpMethod('MKCOL');
      app.route({ method: 'PROPFIND', url: '/dav/:name', handler: async () => ({}) });
      app.route({ method: ['GET', 'MKCOL'], url: '/folders/:name', handler: async () => ({}) });
    });
    // A path served only under an added method is known, not a 404.
    const get = await fetch(`${origin}/dav/a`);
    expect(get.headers.get('allow')).toBe('PROPFIND');
    expect((await expectProblem(get, 405, 'method_not_allowed')).allowed_methods).toEqual(['PROPFIND']);
    // Allow lists the added method too; a method Fastify does not serve at all is answered alike.
    for (const method of ['POST', 'PROPFIND', 'SEARCH']) {
      const res = await fetch(`${origin}/folders/b`, { method });
      expect(res.headers.get('allow'), method).toBe('GET, HEAD, MKCOL');
      await expectProblem(res, 405, 'method_not_allowed');
    }
    expect((await fetch(`${origin}/folders/b`, { method: 'MKCOL' })).status).toBe(200);
    await expectProblem(await fetch(`${origin}/elsewhere`, { method: 'PROPFIND' }), 404, 'not_found');
  });

  it('answers sendPage() without paginate() as a server bug', async () => {
    const origin = await serve((app) => {
      app.get('/bad', async (_request, reply) => sendPage(reply, []));
    });
    await expectProblem(await fetch(`${origin}/bad`), 500, 'internal_error');
  });
});

describe('Link URLs', () => {
  const routes = (app: FastifyInstance): void => {
    app.get('/items', { preHandler: paginate(fixture.paginator) }, async (request, reply) => {
      const { rows } = paginateArray(fixture.items, request.page, fixture.sort);
      return sendPage(reply, rows);
    });
  };

  it('follows X-Forwarded-* only under trustProxy, and baseUrl over both', async () => {
    const forwarded = { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' };
    const trusting = await serve(routes, { server: { trustProxy: true } });
    const viaProxy = await fetch(`${trusting}/items?limit=2`, { headers: forwarded });
    expect(viaProxy.headers.get('link')).toMatch(/^<https:\/\/api\.example\.com\/items\?limit=2&cursor=/);
    const direct = await serve(routes);
    expect((await fetch(`${direct}/items?limit=2`, { headers: forwarded })).headers.get('link')).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/items\?/);
    const based = await serve((app) => {
      app.get('/items', { preHandler: paginate(fixture.paginator, { baseUrl: 'https://public.example.com/v1/' }) }, async (request, reply) =>
        sendPage(reply, paginateArray(fixture.items, request.page, fixture.sort).rows),
      );
    });
    expect((await fetch(`${based}/items?limit=2`)).headers.get('link')).toMatch(/^<https:\/\/public\.example\.com\/v1\/items\?limit=2&cursor=/);
  });

  it('answers a Host header that forms no URL with 400 invalid_request naming the host', async () => {
    const origin = await serve(routes);
    const res = await rawGet(origin, '/items?limit=2', { host: 'bad host!' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request', field: 'host' });
  });
});

describe("hooks: with Fastify's done, or awaited by hand", () => {
  /** Neither has a synchronous twin: every answer comes through a promise. */
  const asyncGuard = (): ConformanceFixture['guard'] => ({ ...fixture.guard, check: (request, options) => fixture.guard.check(request, options) });
  const asyncPaginator = (): ConformanceFixture['paginator'] => ({ ...fixture.paginator, plan: (query, options) => fixture.paginator.plan(query, options) });
  const list = async (request: { page: PagePlan }, reply: FastifyReply): Promise<FastifyReply> =>
    sendPage(reply, paginateArray(fixture.items, request.page, fixture.sort).rows);

  it('answers the same through a synchronous and an asynchronous guard and paginator', async () => {
    const origin = await serve((app) => {
      app.get('/sync', { onRequest: apiKey({ guard: fixture.guard }), preHandler: paginate(fixture.paginator) }, list);
      app.get('/async', { onRequest: apiKey({ guard: asyncGuard() }), preHandler: paginate(asyncPaginator()) }, list);
    });
    for (const path of ['/sync', '/async']) {
      const ok = await fetch(`${origin}${path}?limit=2`, auth(fixture.keys.reader));
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit')).not.toBeNull();
      expect(ok.headers.get('link')).toContain(`${path}?limit=2&cursor=`);
      expect((await ok.json()) as { items: unknown[] }).toMatchObject({ items: [{}, {}] });
      await expectProblem(await fetch(`${origin}${path}?limit=2`), 401, 'missing_api_key');
      await expectProblem(await fetch(`${origin}${path}?limit=0`, auth(fixture.keys.reader)), 400, 'invalid_limit');
    }
  });

  it('passes a rejected guard to the error handler through done', async () => {
    const origin = await serve((app) => {
      app.get('/down', { onRequest: apiKey({ guard: fixture.downGuard }) }, async () => ({ ok: true }));
    });
    await expectProblem(await fetch(`${origin}/down`, auth(fixture.keys.reader)), 503, 'unavailable');
  });

  it('returns a promise when awaited by hand from an async hook, resolved or rejected', async () => {
    const byHand = { key: apiKey({ guard: fixture.guard }), page: paginate(fixture.paginator) };
    const origin = await serve((app) => {
      app.get(
        '/items',
        {
          onRequest: async (request, reply) => {
            const pending = byHand.key(request, reply);
            expect(pending).toBeInstanceOf(Promise);
            await pending;
          },
          preHandler: async (request, reply) => {
            await byHand.page(request, reply);
          },
        },
        list,
      );
    });
    const ok = await fetch(`${origin}/items?limit=2`, auth(fixture.keys.reader));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('link')).toContain('/items?limit=2&cursor=');
    await expectProblem(await fetch(`${origin}/items?limit=2`), 401, 'missing_api_key');
    await expectProblem(await fetch(`${origin}/items?limit=x`, auth(fixture.keys.reader)), 400, 'invalid_limit');
  });

  it('builds the Link from the request target as paginate() sees it, rewritten after apiKey() or not', async () => {
    const origin = await serve((app) => {
      app.get(
        '/items',
        {
          onRequest: [
            apiKey({ guard: fixture.guard }),
            (request, _reply, done) => {
              request.raw.url = request.raw.url!.replace('limit=1', 'limit=3');
              done();
            },
          ],
          preHandler: paginate(fixture.paginator),
        },
        list,
      );
    });
    const res = await fetch(`${origin}/items?limit=1`, auth(fixture.keys.reader));
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/items\?limit=3&cursor=/);
    expect(((await res.json()) as { items: unknown[] }).items).toHaveLength(3);
  });
});
