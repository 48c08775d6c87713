import { ConfigError } from '@keyset/core';
import type { PagePlan } from '@keyset/core';
import express from 'express';
import type { Express } from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createConformanceFixture, expectProblem, rawOverSocket } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { apiKey, notFoundHandler, paginate, problemHandler, sendPage } from './index.ts';
import type { PaginateOptions } from './index.ts';
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

async function serve(app: Express): Promise<string> {
  app.use(notFoundHandler());
  app.use(problemHandler());
  const server = await listen(app);
  servers.push(server);
  return server.origin;
}

function itemsApp(options: PaginateOptions = {}): Express {
  const app = express();
  app.get('/items', paginate(fixture.paginator, options), async (req, res) => {
    const { rows, total } = fixture.list(res.locals.page, new URLSearchParams());
    await sendPage(res, rows, { total });
  });
  return app;
}

const linkOf = (res: Response | { headers: Record<string, string> }): string | undefined => {
  const link = res.headers instanceof Headers ? res.headers.get('link') : res.headers.link;
  return /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1];
};

describe('paginate() for Express', () => {
  it('types res.locals.page as the core PagePlan and stores the plan', async () => {
    const app = express();
    app.get('/', paginate(fixture.paginator), (_req, res) => {
      expectTypeOf(res.locals.page).toEqualTypeOf<PagePlan>();
      res.json(res.locals.page);
    });
    const origin = await serve(app);
    expect(await (await fetch(`${origin}/?limit=3`)).json()).toMatchObject({ mode: 'cursor', limit: 3, take: 4, after: null });
    expect(await (await fetch(`${origin}/?offset=4`)).json()).toMatchObject({ mode: 'offset', limit: 5, offset: 4 });
  });

  it('builds the Link header from the request, keeping the mount path and other parameters', async () => {
    const app = express();
    const router = express.Router();
    router.get('/items', paginate(fixture.paginator), async (_req, res) => {
      await sendPage(res, fixture.list(res.locals.page, new URLSearchParams()).rows);
    });
    app.use('/api', router);
    const origin = await serve(app);
    const res = await fetch(`${origin}/api/items?limit=2&x=%E2%9C%93&x=2`);
    const next = new URL(linkOf(res) ?? '');
    expect(next.origin).toBe(origin);
    expect(next.pathname).toBe('/api/items');
    expect(next.searchParams.getAll('x')).toEqual(['✓', '2']);
  });

  it('ignores X-Forwarded-* unless the app trusts the proxy', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
    const untrusted = await serve(itemsApp());
    expect(linkOf(await fetch(`${untrusted}/items?limit=2`, { headers: forwarded }))).toMatch(new RegExp(`^${untrusted}/items\\?`));
    const trusting = itemsApp();
    trusting.set('trust proxy', 'loopback');
    const trusted = await serve(trusting);
    expect(linkOf(await fetch(`${trusted}/items?limit=2`, { headers: forwarded }))).toMatch(/^https:\/\/api\.example\.com\/items\?limit=2&cursor=/);
  });

  it('re-bases the Link header on baseUrl, whatever Host says', async () => {
    const origin = await serve(itemsApp({ baseUrl: 'https://api.example.com/v1' }));
    expect(linkOf(await fetch(`${origin}/items?limit=2`))).toMatch(/^https:\/\/api\.example\.com\/v1\/items\?limit=2&cursor=/);
    const res = await rawOverSocket(origin)('GET', '/items?limit=2', [['host', 'evil.example/x?']]);
    expect(res.status).toBe(200);
    expect(linkOf(res)).toMatch(/^https:\/\/api\.example\.com\/v1\/items\?/);
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

  it('answers a Host header that cannot form a URL with 400 invalid_request naming host', async () => {
    const origin = await serve(itemsApp());
    for (const host of ['evil.example/x?', 'a b', 'h:99999', 'user@h', '']) {
      const res = await rawOverSocket(origin)('GET', '/items?limit=2', [['host', host]]);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'invalid_request', field: 'host', instance: '/items' });
    }
  });

  it('keeps an absolute-form request target on the server origin', async () => {
    const origin = await serve(itemsApp());
    const host = new URL(origin).host;
    const res = await rawOverSocket(origin)('GET', 'http://evil.example/items?limit=2', [['host', host]]);
    expect(res.status).toBe(200);
    expect(linkOf(res)).toMatch(new RegExp(`^http://${host}/items\\?limit=2&cursor=`));
  });

  it('hands filters the raw query string and leaves req.query alone', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.set('query parser', 'extended');
    app.get(
      '/',
      paginate(fixture.paginator, { filters: (query, req) => (seen.push(query.getAll('tag'), req.query), { tags: query.getAll('tag') }) }),
      (req, res) => {
        seen.push(req.query);
        res.end();
      },
    );
    const origin = await serve(app);
    await fetch(`${origin}/?tag=a&tag=b&tag[x]=c&limit=1`);
    expect(seen[0]).toEqual(['a', 'b']);
    // What qs makes of it: the repeated `tag` is no longer a list, which is why paginate() never reads it.
    expect(seen[2]).toEqual({ tag: { 0: 'a', 1: 'b', x: 'c' }, limit: '1' });
    expect(seen[1]).toEqual(seen[2]);
  });

  it('binds the filters into the cursor', async () => {
    const app = express();
    app.get('/', paginate(fixture.paginator, { filters: (query) => ({ status: query.get('status') }) }), async (_req, res) => {
      await sendPage(res, fixture.list(res.locals.page, new URLSearchParams()).rows);
    });
    const origin = await serve(app);
    const { nextCursor } = (await (await fetch(`${origin}/?status=paid&limit=2`)).json()) as { nextCursor: string };
    expect((await fetch(`${origin}/?status=paid&cursor=${nextCursor}`)).status).toBe(200);
    await expectProblem(await fetch(`${origin}/?status=open&cursor=${nextCursor}`), 400, 'invalid_cursor');
  });

  it('turns sendPage() without paginate() into a 500 problem', async () => {
    const app = express();
    app.get('/', async (_req, res) => {
      await sendPage(res, []);
    });
    await expectProblem(await fetch(await serve(app)), 500, 'internal_error');
  });
});

describe('paginate() after apiKey()', () => {
  it('leaves only apiKey and page as res.locals names, and sends the page', async () => {
    const app = express();
    let names: string[] = [];
    app.get('/items', apiKey({ guard: fixture.guard }), paginate(fixture.paginator), async (_req, res) => {
      names = Object.keys(res.locals);
      await sendPage(res, fixture.list(res.locals.page, new URLSearchParams()).rows);
    });
    const origin = await serve(app);
    const res = await fetch(`${origin}/items?limit=2`, { headers: { authorization: `ApiKey ${fixture.keys.reader}` } });
    expect(res.status).toBe(200);
    expect(linkOf(res)).toMatch(new RegExp(`^${origin}/items\\?limit=2&cursor=`));
    expect(names.sort()).toEqual(['apiKey', 'page']);
  });

  it("builds the Link from the sub-app's own view of the URL when apiKey() ran in the parent app", async () => {
    const parent = express();
    const api = express();
    api.set('trust proxy', true);
    api.get('/items', paginate(fixture.paginator), async (_req, res) => {
      await sendPage(res, fixture.list(res.locals.page, new URLSearchParams()).rows);
    });
    parent.use('/v1', apiKey({ guard: fixture.guard }), api);
    const origin = await serve(parent);
    const headers = { authorization: `ApiKey ${fixture.keys.reader}`, 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' };
    const res = await fetch(`${origin}/v1/items?limit=2`, { headers });
    expect(res.status).toBe(200);
    expect(linkOf(res)).toMatch(/^https:\/\/api\.example\.com\/v1\/items\?limit=2&cursor=/);
  });
});

describe('paginate() with a paginator of your own (no synchronous twin)', () => {
  it('answers as the core paginator does', async () => {
    // Methods replaced by wrappers: the twins stay behind, every answer is a promise.
    const own = { ...fixture.paginator, plan: (q: URLSearchParams, o?: object) => fixture.paginator.plan(q, o), page: (...a: Parameters<typeof fixture.paginator.page>) => fixture.paginator.page(...a) };
    const app = express();
    app.get('/items', paginate(own), async (_req, res) => {
      await sendPage(res, fixture.list(res.locals.page, new URLSearchParams()).rows);
    });
    const origin = await serve(app);
    const [mine, core] = await Promise.all([fetch(`${origin}/items?limit=2`), fetch(`${await serve(itemsApp())}/items?limit=2`)]);
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { items: unknown[] }).items).toEqual(((await core.json()) as { items: unknown[] }).items);
    expect(linkOf(mine)).toMatch(new RegExp(`^${origin}/items\\?limit=2&cursor=`));
    await expectProblem(await fetch(`${origin}/items?limit=0`), 400, 'invalid_limit');
  });
});
