import { ConfigError, paginateArray } from '@keyset/core';
import { createConformanceFixture, expectProblem } from '@keyset/conformance';
import type { ConformanceFixture, Item } from '@keyset/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginate, problemHandler, sendPage } from './index.ts';
import type { PaginateOptions } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

const route = (options?: PaginateOptions) =>
  problemHandler()(async (request) => {
    const page = await paginate(request, fixture.paginator, options);
    const status = new URL(request.url).searchParams.get('status');
    const rows = status === null ? fixture.items : fixture.items.filter((item) => item.status === status);
    const { rows: pageRows, total } = paginateArray(rows, page, fixture.sort);
    return sendPage(page, pageRows, { total, headers: { 'cache-control': 'no-store', link: 'ignored' } });
  });

const get = (handler: ReturnType<typeof route>, path: string): Promise<Response> => handler(new Request(`http://localhost${path}`));

describe('paginate() and sendPage()', () => {
  it('binds filters into the cursor: replayed under another filter it is 400 invalid_cursor', async () => {
    const paid = route({ filters: () => ({ status: 'paid' }) });
    const first = await get(paid, '/items?status=paid&limit=2');
    const { nextCursor } = (await first.json()) as { nextCursor: string };
    expect((await get(paid, `/items?status=paid&cursor=${encodeURIComponent(nextCursor)}`)).status).toBe(200);
    const open = route({ filters: () => ({ status: 'open' }) });
    await expectProblem(await get(open, `/items?status=open&cursor=${encodeURIComponent(nextCursor)}`), 400, 'invalid_cursor');
  });

  it('reads function filters from the raw query', async () => {
    const handler = route({ filters: (query) => ({ status: query.get('status') }) });
    const first = (await (await get(handler, '/items?status=open&limit=2')).json()) as { items: Item[]; nextCursor: string };
    expect(first.items.every((item) => item.status === 'open')).toBe(true);
    const replay = await get(handler, `/items?status=paid&cursor=${encodeURIComponent(first.nextCursor)}`);
    await expectProblem(replay, 400, 'invalid_cursor');
  });

  it('builds the Link header on baseUrl behind a proxy, keeping the path and query', async () => {
    const res = await get(route({ baseUrl: 'https://api.example.com/v1/' }), '/items?limit=2');
    expect(res.headers.get('link')).toMatch(/^<https:\/\/api\.example\.com\/v1\/items\?limit=2&cursor=[^>]+>; rel="next"$/);
  });

  it("keeps the caller's extra headers, but Link and content-type are the page's", async () => {
    // The only page of the 16 paid items: neither next nor prev, so no Link of its own.
    const res = await get(route(), '/items?status=paid&offset=0&limit=20');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('link')).toBe('ignored');
    const middle = await get(route(), '/items?offset=10&limit=10');
    expect(middle.headers.get('link')).toContain('offset=20');
    expect(middle.headers.get('link')).toContain('rel="prev"');
    expect(middle.headers.get('link')).not.toContain('ignored');
  });

  it('refuses a plan that paginate() did not return, and a bad configuration', async () => {
    const plan = await paginate(new Request('http://localhost/items'), fixture.paginator);
    await expect(sendPage({ ...plan }, [])).rejects.toThrow(/plan paginate\(\) returned/);
    const request = new Request('http://localhost/items');
    await expect(paginate(request, {} as never)).rejects.toThrow(ConfigError);
    await expect(paginate(request, fixture.paginator, { filters: 'status' as never })).rejects.toThrow(ConfigError);
    await expect(paginate(request, fixture.paginator, { baseUrl: 'not a url' })).rejects.toThrow(ConfigError);
  });

  it('answers a plan once: sendPage() lets go of its state, and a second call with the same plan throws', async () => {
    const plan = await paginate(new Request('http://localhost/items?limit=2'), fixture.paginator);
    const { rows } = paginateArray(fixture.items, plan, fixture.sort);
    const first = await sendPage(plan, rows);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { items: Item[] }).items).toHaveLength(2);
    await expect(sendPage(plan, rows)).rejects.toThrow(/answers it once/);
  });
  it('returns promises as async functions would: rejected, never thrown, for a bad query, a bad paginator or an unknown plan', async () => {
    const request = (query: string) => new Request(`http://localhost/items${query}`);
    const settled = (run: () => Promise<unknown>) => {
      let returned: Promise<unknown> | undefined;
      expect(() => (returned = run())).not.toThrow();
      return returned!.then((value) => value, (error: unknown) => error);
    };
    expect(await settled(() => paginate(request('?limit=abc'), fixture.paginator))).toHaveProperty('status', 400);
    expect(await settled(() => paginate(request(''), {} as never))).toBeInstanceOf(ConfigError);
    expect(await settled(() => sendPage({ mode: 'cursor' } as never, []))).toBeInstanceOf(Error);
    // A paginator answering later, and one giving a non-native thenable: the plan is still the one sendPage() answers.
    const later = { ...fixture.paginator, plan: async (...args: Parameters<typeof fixture.paginator.plan>) => fixture.paginator.plan(...args) };
    const thenable = {
      ...fixture.paginator,
      plan: (...args: Parameters<typeof fixture.paginator.plan>) => ({ then: (ok: (v: unknown) => void, fail: (e: unknown) => void) => fixture.paginator.plan(...args).then(ok, fail) }) as never,
    };
    for (const paginator of [fixture.paginator, later, thenable]) {
      const plan = await paginate(request('?limit=2'), paginator);
      expect((await sendPage(plan, fixture.items.slice(0, 2))).status).toBe(200);
    }
  });
});
