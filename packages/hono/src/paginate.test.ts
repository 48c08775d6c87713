import { ConfigError, createPaginator } from '@keyset/core';
import type { PagePlan } from '@keyset/core';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { notFoundHandler, paginate, problemHandler, sendPage } from './index.ts';
import { createConformanceFixture, expectProblem } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

function appWith(options: Parameters<typeof paginate>[1] = {}, base = ''): Hono {
  const app = new Hono().basePath(base);
  app.get('/items', paginate(fixture.paginator, options), (c) => {
    const { rows, total } = fixture.list(c.var.page, new URL(c.req.url).searchParams);
    return sendPage(c, rows, { total });
  });
  app.onError(problemHandler({ onError: (error, _c, status) => fixture.reported.push({ error, status }) }));
  app.notFound(notFoundHandler());
  return app;
}

const linkOf = (res: Response): string | undefined => /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];

describe('paginate() for Hono', () => {
  it('types c.var.page and c.get("page") as the core PagePlan', async () => {
    const app = new Hono();
    app.get('/', paginate(fixture.paginator), (c) => {
      expectTypeOf(c.var.page).toEqualTypeOf<PagePlan>();
      expectTypeOf(c.get('page')).toEqualTypeOf<PagePlan>();
      return c.json(c.var.page);
    });
    const res = await app.request('/?limit=3');
    expect(await res.json()).toMatchObject({ mode: 'cursor', limit: 3, take: 4, after: null });
    const offset = await app.request('/?offset=6&limit=2');
    expect(await offset.json()).toMatchObject({ mode: 'offset', limit: 2, take: 3, offset: 6 });
  });

  it('builds the Link header from the request URL, keeping the base path and other parameters', async () => {
    const res = await appWith({}, '/api').request('http://internal:8080/api/items?limit=2&x=%E2%9C%93&x=2');
    expect(res.status).toBe(200);
    const next = new URL(linkOf(res) ?? '');
    expect(next.origin).toBe('http://internal:8080');
    expect(next.pathname).toBe('/api/items');
    expect(next.searchParams.getAll('x')).toEqual(['✓', '2']);
  });

  it('re-bases the Link header on baseUrl behind a proxy', async () => {
    const app = appWith({ baseUrl: 'https://api.example.com/v1/' });
    const res = await app.request('http://10.0.0.7:3000/items?limit=2');
    expect(linkOf(res)).toMatch(/^https:\/\/api\.example\.com\/v1\/items\?limit=2&cursor=/);
  });

  it('refuses a missing paginator or a filters that is not a function', () => {
    expect(() => paginate({} as never)).toThrow(ConfigError);
    expect(() => paginate(fixture.paginator, { filters: { status: 'paid' } as never })).toThrow(ConfigError);
  });

  it.each(['not a url', 'ftp://example.com', 'https://example.com/?a=1', 'https://example.com/#top', '/relative'])(
    'refuses baseUrl %s when the middleware is created',
    (baseUrl) => {
      expect(() => paginate(fixture.paginator, { baseUrl })).toThrow(ConfigError);
    },
  );

  it('hands filters the raw query string, repeated parameters and all', async () => {
    const seen: string[][] = [];
    const app = new Hono();
    app.get('/', paginate(fixture.paginator, { filters: (query) => (seen.push(query.getAll('tag')), { tags: query.getAll('tag') }) }), (c) =>
      c.text('ok'),
    );
    await app.request('/?tag=a&tag=b&tag[x]=c');
    expect(seen).toEqual([['a', 'b']]);
  });

  it('binds the filters into the cursor', async () => {
    const app = new Hono();
    const route = paginate(fixture.paginator, { filters: (query) => ({ tags: query.getAll('tag') }) });
    app.get('/', route, (c) => sendPage(c, fixture.list(c.var.page, new URLSearchParams()).rows));
    app.onError(problemHandler());
    const { nextCursor } = (await (await app.request('/?tag=a&tag=b&limit=2')).json()) as { nextCursor: string };
    expect((await app.request(`/?tag=a&tag=b&cursor=${nextCursor}`)).status).toBe(200);
    await expectProblem(await app.request(`/?tag=b&tag=a&cursor=${nextCursor}`), 400, 'invalid_cursor');
  });

  it('serves offset pages with total: null when the source did not count', async () => {
    const app = new Hono();
    app.get('/', paginate(fixture.paginator), (c) => sendPage(c, fixture.list(c.var.page, new URLSearchParams()).rows));
    const res = await app.request('/?offset=0&limit=5');
    expect(await res.json()).toMatchObject({ total: null });
    expect(linkOf(res)).toBe('http://localhost/?offset=5&limit=5');
  });

  it('turns sendPage() without paginate() into a reported 500 problem', async () => {
    const app = new Hono();
    app.get('/', (c) => sendPage(c, []));
    const reported: unknown[] = [];
    app.onError(problemHandler({ onError: (error) => reported.push(error) }));
    await expectProblem(await app.request('/'), 500, 'internal_error');
    expect(String(reported[0])).toContain('paginate()');
  });

  it('settles after a next() that returns nothing or a bare thenable, as an async middleware awaiting it did', async () => {
    const nexts: [string, (ran: () => void) => () => Promise<void>][] = [
      ['nothing', (ran) => () => (ran(), undefined) as never],
      // A thenable whose then() answers nothing (not a promise), calling back at once.
      ['bare thenable', (ran) => () => ({ then: (ok: () => void) => void (ran(), ok()) }) as never],
    ];
    for (const [name, makeNext] of nexts) {
      const middleware = paginate(fixture.paginator);
      const app = new Hono();
      app.get('/', async (c) => {
        let ranNext = false;
        const returned = middleware(c, makeNext(() => (ranNext = c.var.page !== undefined)));
        expect(returned).toBeInstanceOf(Promise);
        const outcome = await (returned as Promise<unknown>).then(
          (value) => `resolved ${String(value)} after next: ${ranNext}`,
          (error: unknown) => `rejected ${String(error)}`,
        );
        return c.text(outcome);
      });
      expect(`${name}: ${await (await app.request('/?limit=2')).text()}`).toBe(`${name}: resolved undefined after next: true`);
    }
  });

  it('returns a promise as an async middleware would: rejected, never thrown, on a bad query; resolved with nothing after the chain', async () => {
    // The paginator's synchronous twin, a plan given later, and a plan as a non-native thenable.
    const later = { ...fixture.paginator, plan: async (...args: Parameters<typeof fixture.paginator.plan>) => fixture.paginator.plan(...args) };
    const thenable = {
      ...fixture.paginator,
      plan: (...args: Parameters<typeof fixture.paginator.plan>) => ({ then: (ok: (v: unknown) => void, fail: (e: unknown) => void) => fixture.paginator.plan(...args).then(ok, fail) }) as never,
    };
    for (const paginator of [fixture.paginator, later, thenable]) {
      const middleware = paginate(paginator);
      const app = new Hono();
      app.get('/', async (c) => {
        let ranNext = false;
        let returned: unknown;
        try {
          returned = middleware(c, async () => {
            ranNext = c.var.page !== undefined;
          });
        } catch {
          return c.text('threw');
        }
        expect(returned).toBeInstanceOf(Promise);
        const outcome = await (returned as Promise<unknown>).then(
          (value) => `resolved ${String(value)}, page set before next: ${ranNext}`,
          (error: { code?: string }) => `rejected ${error.code}`,
        );
        return c.text(outcome);
      });
      expect(await (await app.request('/?limit=abc')).text()).toMatch(/^rejected [a-z_]+$/);
      expect(await (await app.request('/?limit=2')).text()).toBe('resolved undefined, page set before next: true');
    }
  });

  it('plans once per request and never mutates the paginator', async () => {
    let plans = 0;
    const paginator = createPaginator<{ id: number }>({
      endpoint: 'GET /count',
      sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }],
      cursor: { secrets: ['a-secret-of-reasonable-length-0001'] },
    });
    const counting = { ...paginator, plan: (...args: Parameters<typeof paginator.plan>) => (plans++, paginator.plan(...args)) };
    const app = new Hono();
    app.get('/', paginate(counting), (c) => sendPage(c, [{ id: 1 }]));
    await app.request('/');
    await app.request('/?limit=1');
    expect(plans).toBe(2);
  });
});
