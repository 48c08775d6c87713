/**
 * The pagination checks of the adapter conformance suite: cursor and offset walks both
 * ways, the `Link` header, the total, sorting, and the 400s for a bad limit, offset, sort
 * or cursor. Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { LIMITS, TOTAL_CAP } from './fixture.ts';
import type { Item } from './fixture.ts';
import type { ConformanceRun } from './conformance-run.ts';
import { expectProblem } from './expect-problem.ts';

/** The query `GET /query` is called with. */
export const PARSED_QUERY_SEARCH = '?limit=2&a[b]=c&x=1&x=2';

/** The targets of a `Link` header by relation type; fails on anything but `<url>; rel="…"` parts. */
function linkTargets(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of header === null ? [] : header.split(', ')) {
    const m = /^<(https?:\/\/[^>]+)>; rel="(next|prev|first)"$/.exec(part);
    expect(m, `Link part ${part}`).not.toBeNull();
    expect(out[m![2]!], `rel="${m![2]}" twice`).toBeUndefined();
    out[m![2]!] = m![1]!;
  }
  return out;
}

/** Registers the pagination checks. */
export function describePaginationConformance(run: ConformanceRun): void {
  const { adapter, get } = run;
  /** The ids `GET /items` lists, in its default order (score down, then id up), of one status or all. */
  const expected = (status?: Item['status']): number[] =>
    [...run.fixture.items]
      .filter((item) => status === undefined || item.status === status)
      .sort((a, b) => b.score - a.score || a.id - b.id)
      .map((item) => item.id);

  describe('pagination', () => {
    it('Link keeps limit, sort, the filters and the parameters the app declared, and drops every other one', async () => {
      // A key cut to 36 characters, or split by dots, as an unknown parameter's name or value.
      const secret = run.fixture.keys.reader.slice(-38);
      const cut = secret.slice(0, 36);
      const dotted = `${secret.slice(0, 12)}.${secret.slice(12, 24)}.${secret.slice(24)}`;
      const res = await get(`/items?status=open&limit=3&sort=-id&x=kept&${cut}=1&utm=${dotted}&${dotted}=2`, run.reader);
      expect(res.status).toBe(200);
      const link = res.headers.get('link') ?? '';
      const next = new URL(linkTargets(link).next!);
      expect([...next.searchParams.keys()]).toEqual(['status', 'limit', 'sort', 'x', 'cursor']);
      for (let i = 0; i + 8 <= secret.length; i++) expect(link).not.toContain(secret.slice(i, i + 8));
    });

    it('serves the first cursor page with a Link header and RateLimit headers', async () => {
      const res = await get('/items?status=open&limit=3', run.reader);
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
        last = await get(`/items?limit=7${query}`, run.reader);
        expect(last.status).toBe(200);
        const body = (await last.json()) as { items: Item[]; nextCursor: string | null };
        seen.push(...body.items.map((item) => item.id));
        cursor = body.nextCursor;
        pages += 1;
      } while (cursor !== null && pages < 100);
      expect(seen).toEqual(expected());
      expect(pages).toBe(Math.ceil(run.fixture.items.length / 7));
      expect(Object.keys(linkTargets(last.headers.get('link')))).toEqual(['prev', 'first']);
    });

    it('walks back from the last page by prevCursor and rel="prev": the same pages reversed, ending with prevCursor null', async () => {
      type Body = { items: Item[]; nextCursor: string | null; prevCursor: string | null };
      const forward: number[][] = [];
      let res = await get('/items?status=paid&limit=3', run.reader);
      let body = (await res.json()) as Body;
      forward.push(body.items.map((item) => item.id));
      while (body.nextCursor !== null && forward.length < 100) {
        res = await get(linkTargets(res.headers.get('link')).next!, run.reader);
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
        res = await get(links.prev, run.reader);
        expect(res.status).toBe(200);
        body = (await res.json()) as Body;
        back.push(body.items.map((item) => item.id));
        links = linkTargets(res.headers.get('link'));
      }
      expect(back).toEqual(forward.slice(0, -1).reverse());
      expect(body.prevCursor).toBeNull();
      expect(Object.keys(links)).toEqual(['next']);
      // And forward again from the start of the walk back.
      const again = (await (await get(links.next!, run.reader)).json()) as Body;
      expect(again.items.map((item) => item.id)).toEqual(forward[1]);
    });

    it('walks a filtered collection by following Link headers alone', async () => {
      const seen: number[] = [];
      let url: string | null = '/items?status=paid&limit=4';
      let pages = 0;
      while (url !== null && pages < 100) {
        const res = await get(url, run.reader);
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
      for (let offset = 0; offset < run.fixture.items.length; offset += 10) {
        const res = await get(`/items?offset=${offset}&limit=10`, run.reader);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { items: Item[]; total: number; totalAtLeast?: true; totalEstimated?: true };
        expect(body.totalEstimated).toBeUndefined();
        if (offset + 10 < run.fixture.items.length) {
          // The count stops at TOTAL_CAP; the page itself proves offset + 10 + 1 rows.
          expect(body).toMatchObject({ total: Math.max(TOTAL_CAP, offset + 11), totalAtLeast: true });
        } else {
          expect(body.total).toBe(run.fixture.items.length);
          expect(body.totalAtLeast).toBeUndefined();
        }
        seen.push(...body.items.map((item) => item.id));
        const links = linkTargets(res.headers.get('link'));
        if (offset + 10 < run.fixture.items.length) expect(new URL(links.next!).searchParams.get('offset')).toBe(String(offset + 10));
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
      const res = await get('/items?status=paid&offset=0&limit=5', run.reader);
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
      await expectProblem(await get(`/items?${query}`, run.reader), 400, 'invalid_limit');
    });

    it('rejects a limit over the maximum with 400 limit_too_large and max_limit', async () => {
      const body = await expectProblem(await get(`/items?limit=${LIMITS.max + 1}`, run.reader), 400, 'limit_too_large');
      expect(body.max_limit).toBe(LIMITS.max);
    });

    it.each([['offset=-1'], ['offset=01'], ['offset='], ['offset=x'], ['offset=1&offset=2']])(
      'rejects %s with 400 invalid_offset',
      async (query) => {
        await expectProblem(await get(`/items?${query}`, run.reader), 400, 'invalid_offset');
      },
    );

    it('rejects a tampered, truncated or foreign-filter cursor with 400 invalid_cursor', async () => {
      const first = (await (await get('/items?status=paid&limit=2', run.reader)).json()) as { nextCursor: string };
      const cursor = first.nextCursor;
      const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
      for (const bad of [flipped, cursor.slice(0, -3), 'garbage', '%']) {
        const res = await get(`/items?status=paid&cursor=${encodeURIComponent(bad)}`, run.reader);
        await expectProblem(res, 400, 'invalid_cursor');
      }
      // Replayed against another filter: the signature covers the filters.
      const replay = await get(`/items?status=open&cursor=${encodeURIComponent(cursor)}`, run.reader);
      await expectProblem(replay, 400, 'invalid_cursor');
    });

    it('orders by ?sort= (walking both ways), keeps sort in every Link, and binds it into the cursor', async () => {
      type Body = { items: Item[]; nextCursor: string | null; prevCursor: string | null };
      const byId = [...run.fixture.items].sort((a, b) => b.id - a.id).map((item) => item.id);
      const seen: number[] = [];
      let res = await get('/items?sort=-id&limit=20', run.reader);
      let pages = 0;
      for (;;) {
        expect(res.status).toBe(200);
        const body = (await res.json()) as Body;
        seen.push(...body.items.map((item) => item.id));
        const links = linkTargets(res.headers.get('link'));
        for (const target of Object.values(links)) expect(new URL(target).searchParams.get('sort')).toBe('-id');
        if (links.next === undefined || ++pages > 10) break;
        res = await get(links.next, run.reader);
      }
      expect(seen).toEqual(byId);
      // A cursor issued under ?sort=-id is refused under the default order and another sort.
      const first = (await (await get('/items?sort=-id&limit=3', run.reader)).json()) as Body;
      await expectProblem(await get(`/items?limit=3&cursor=${first.nextCursor}`, run.reader), 400, 'invalid_cursor');
      await expectProblem(await get(`/items?sort=id&limit=3&cursor=${first.nextCursor}`, run.reader), 400, 'invalid_cursor');
      const second = (await (await get(`/items?sort=-id&limit=3&cursor=${first.nextCursor}`, run.reader)).json()) as Body;
      const back = (await (await get(`/items?sort=-id&limit=3&cursor=${second.prevCursor}`, run.reader)).json()) as Body;
      expect(back.items).toEqual(first.items);
    });

    it.each([['sort=price'], ['sort=id,id'], ['sort='], ['sort=-'], ['sort=id&sort=score']])('rejects %s with 400 invalid_sort naming the fields', async (query) => {
      const body = await expectProblem(await get(`/items?${query}`, run.reader), 400, 'invalid_sort');
      expect(body.sortable).toEqual(['score', 'id']);
    });

    it('rejects cursor and offset together with 400 conflicting_pagination', async () => {
      const { nextCursor } = (await (await get('/items?limit=2', run.reader)).json()) as { nextCursor: string };
      await expectProblem(await get(`/items?offset=0&cursor=${encodeURIComponent(nextCursor)}`, run.reader), 400, 'conflicting_pagination');
    });

    it('puts the path without the query in `instance`, and keeps RateLimit headers on errors', async () => {
      const res = await get('/items?limit=0&note=secret', run.reader);
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
}
