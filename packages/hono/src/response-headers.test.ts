/**
 * Which headers reach the client on a protected, paginated Hono route: `sendPage()`
 * builds its response from one plain header record (RateLimit, Link, content type), and
 * nothing another middleware set with `c.header()`, nor the RateLimit headers on a
 * response the handler built itself, may go missing because of it.
 */
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { requestId } from 'hono/request-id';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConformanceFixture } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { apiKey, paginate, problemHandler, sendPage } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

const get = (app: Hono, path: string, headers: Record<string, string> = {}) =>
  app.request(path, { headers: { authorization: `ApiKey ${fixture.keys.reader}`, ...headers } });

function pagedApp(before?: (app: Hono) => void, handler?: 'own' | 'sendPage-then-own'): Hono {
  const app = new Hono();
  app.onError(problemHandler());
  before?.(app);
  app.get('/items', apiKey({ guard: fixture.guard, scopes: ['items:read'] }), paginate(fixture.paginator, { filters: (q) => fixture.filters(q) }), async (c) => {
    const { rows } = fixture.list(c.var.page, new URL(c.req.url).searchParams);
    if (handler === 'own') return c.json({ own: true });
    if (handler === 'sendPage-then-own') {
      await sendPage(c, rows);
      return c.json({ own: true }, 202);
    }
    return sendPage(c, rows);
  });
  return app;
}

describe('sendPage() headers on Hono', () => {
  it('sends RateLimit, Link and the JSON content type from one record', async () => {
    const res = await get(pagedApp(), '/items?limit=2');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toMatch(/q=\d+/);
    expect(res.headers.get('link')).toMatch(/rel="next"/);
    expect(((await res.json()) as { items: unknown[] }).items).toHaveLength(2);
  });

  it('keeps headers other middleware set with c.header() before the route (CORS, request id)', async () => {
    const app = pagedApp((a) => {
      a.use(cors({ origin: 'https://app.example' }));
      a.use(requestId());
      a.use(async (c, next) => {
        c.header('x-before', 'kept');
        await next();
      });
    });
    const res = await get(app, '/items?limit=2', { origin: 'https://app.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-before')).toBe('kept');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('link')).toMatch(/rel="next"/);
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  it('keeps headers middleware adds after the route answered', async () => {
    const app = pagedApp((a) =>
      a.use(async (c, next) => {
        await next();
        c.header('x-after', 'added');
      }),
    );
    const res = await get(app, '/items?limit=2');
    expect(res.headers.get('x-after')).toBe('added');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
  });

  it('a handler answering with its own response still gets the RateLimit headers', async () => {
    for (const handler of ['own', 'sendPage-then-own'] as const) {
      const res = await get(pagedApp(undefined, handler), '/items?limit=2');
      expect(await res.json()).toEqual({ own: true });
      expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
      expect(res.headers.get('ratelimit-policy')).toMatch(/q=\d+/);
    }
  });

  it('a problem after the guard passed (bad cursor) carries the RateLimit headers', async () => {
    const res = await get(pagedApp(), '/items?cursor=not-a-cursor');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
  });
});
