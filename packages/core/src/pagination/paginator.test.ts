import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { ConfigError, KeysetError } from '../errors.ts';
import { paginateArray } from './paginate-array.ts';
import { createPaginator, type Paginator, type PaginatorOptions } from './paginator.ts';
import type { CursorPage, OffsetPage, SortKey } from './types.ts';
import { createCursorCodec } from '../cursor/cursor-codec.ts';
import { cursorFingerprint } from '../cursor/cursor-fingerprint.ts';

interface Order {
  id: bigint;
  createdAt: Date | string;
  status: string;
}

const SECRET = 'paginator-test-secret-paginator-test-secret';
const sort: SortKey[] = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
];
const base: PaginatorOptions = { endpoint: 'GET /api/orders', sort, keepParams: ['tag'], cursor: { secrets: [SECRET] } };
const orders: Order[] = Array.from({ length: 7 }, (_, i) => ({
  id: 2n ** 60n + BigInt(i),
  // Pairs share a timestamp, and two differ only in the microseconds.
  createdAt: i < 6 ? `2024-05-01 10:00:00.00000${Math.floor(i / 2)}+00` : '2024-05-01T09:00:00Z',
  status: 'paid',
}));
const URL_ = 'https://api.example.com/api/orders?status=paid&limit=3&tag=a&tag=b';

/** A "from the start" cursor, as a client would get it from rel="first". */
async function startCursor(p: Paginator<Order>): Promise<string> {
  const fp = await cursorFingerprint({ endpoint: base.endpoint, sort: p.sort, filters: { status: 'paid' } });
  return createCursorCodec({ secrets: [SECRET] }).encode(null, fp, p.sort);
}

function linksOf(header: string | undefined): Record<string, URL> {
  const out: Record<string, URL> = {};
  for (const part of header === undefined ? [] : header.split(', ')) {
    const m = /^<([^>]+)>; rel="(\w+)"$/.exec(part)!;
    out[m[2]!] = new URL(m[1]!);
  }
  return out;
}

const rejection = (promise: Promise<unknown>): Promise<KeysetError> => rejectionOf(promise, KeysetError);

describe('createPaginator', () => {
  const paginator = createPaginator<Order>(base);

  it('plans a first cursor page', async () => {
    const plan = await paginator.plan(new URLSearchParams('limit=3'));
    expect(plan).toMatchObject({ mode: 'cursor', limit: 3, take: 4, after: null });
    expect(plan.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Object.isFrozen(plan)).toBe(true);
  });

  it('plans carry their members in one order, frozen, with and without filters, in both modes', async () => {
    const first = await paginator.plan(new URLSearchParams('limit=3'));
    expect(Object.keys(first)).toEqual(['mode', 'limit', 'take', 'direction', 'after', 'sort', 'fingerprint']);
    const filtered = await paginator.plan(new URLSearchParams('limit=3'), { filters: { status: 'paid' } });
    expect(Object.keys(filtered)).toEqual(['mode', 'limit', 'take', 'direction', 'after', 'sort', 'fingerprint', 'filters']);
    const offset = await paginator.plan(new URLSearchParams('offset=4'));
    expect(Object.keys(offset)).toEqual(['mode', 'limit', 'take', 'offset', 'sort', 'fingerprint', 'total']);
    const offsetFiltered = await paginator.plan(new URLSearchParams('offset=4'), { filters: { status: 'paid' } });
    expect(Object.keys(offsetFiltered)).toEqual(['mode', 'limit', 'take', 'offset', 'sort', 'fingerprint', 'total', 'filters']);
    for (const plan of [first, filtered, offset, offsetFiltered]) expect(Object.isFrozen(plan)).toBe(true);
    const { rows } = paginateArray(orders, filtered, paginator.sort);
    const { body } = await paginator.page(filtered, rows, { url: URL_ });
    const next = await paginator.plan(new URLSearchParams(`cursor=${(body as CursorPage<Order>).nextCursor!}`), { filters: { status: 'paid' } });
    expect(Object.keys(next)).toEqual(['mode', 'limit', 'take', 'direction', 'after', 'sort', 'fingerprint', 'filters']);
    expect(Object.isFrozen(next) && Object.isFrozen(next.mode === 'cursor' && next.after) && Object.isFrozen(next.filters)).toBe(true);
  });

  it('pages in cursor mode: limit + 1 decides has-more, Link keeps the other parameters', async () => {
    const url = new URL(URL_);
    const plan = await paginator.plan(url.searchParams, { filters: { status: 'paid' } });
    const { body, headers } = await paginator.page(plan, paginateArray(orders, plan, paginator.sort).rows, { url });
    const page = body as CursorPage<Order>;
    expect(page.items.map((o) => o.id - 2n ** 60n)).toEqual([5n, 4n, 3n]);
    expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(page.prevCursor).toBeNull();
    expect(headers.link).toMatch(/^<[^>]+>; rel="next"$/);
    const next = new URL(/^<(.+)>; rel="next"$/.exec(headers.link!)![1]!);
    expect(next.origin + next.pathname).toBe('https://api.example.com/api/orders');
    expect([...next.searchParams]).toEqual([
      ['status', 'paid'],
      ['limit', '3'],
      ['tag', 'a'],
      ['tag', 'b'],
      ['cursor', page.nextCursor],
    ]);
    // Follow it to the end.
    const plan2 = await paginator.plan(next.searchParams, { filters: { status: 'paid' } });
    const second = await paginator.page(plan2, paginateArray(orders, plan2, paginator.sort).rows, { url: next });
    expect((second.body as CursorPage<Order>).items.map((o) => o.id - 2n ** 60n)).toEqual([2n, 1n, 0n]);
    const plan3 = await paginator.plan(linksOf(second.headers.link).next!.searchParams, { filters: { status: 'paid' } });
    const last = await paginator.page(plan3, paginateArray(orders, plan3, paginator.sort).rows, { url: next });
    expect(last.body).toEqual({ items: [orders[6]], nextCursor: null, prevCursor: expect.any(String) });
    expect(Object.keys(linksOf(last.headers.link))).toEqual(['prev', 'first']);
  });

  it('a full page with no extra row is the last page (nextCursor null, never "")', async () => {
    const plan = await paginator.plan(new URLSearchParams('limit=7'));
    const { body, headers } = await paginator.page(plan, paginateArray(orders, plan, paginator.sort).rows, { url: URL_ });
    expect((body as CursorPage<Order>).nextCursor).toBeNull();
    expect(headers.link).toBeUndefined();
  });

  it('refuses a cursor replayed with other filters or on another endpoint', async () => {
    const plan = await paginator.plan(new URLSearchParams('limit=1'), { filters: { status: 'paid' } });
    const { body } = await paginator.page(plan, paginateArray(orders, plan, paginator.sort).rows, { url: URL_ });
    const cursor = (body as CursorPage<Order>).nextCursor!;
    const query = new URLSearchParams({ cursor });
    await expect(paginator.plan(query, { filters: { status: 'paid' } })).resolves.toMatchObject({ mode: 'cursor' });
    expect((await rejection(paginator.plan(query, { filters: { status: 'open' } }))).code).toBe('invalid_cursor');
    const keys = createPaginator<Order>({ ...base, endpoint: 'GET /api/keys' });
    expect((await rejection(keys.plan(query, { filters: { status: 'paid' } }))).code).toBe('invalid_cursor');
  });

  it('offset mode: { items, total }, next while offset + limit < total', async () => {
    const plan = await paginator.plan(new URLSearchParams('offset=3&limit=3'));
    expect(plan).toMatchObject({ mode: 'offset', limit: 3, take: 4, offset: 3 });
    const { rows, total } = paginateArray(orders, plan, paginator.sort);
    const { body, headers } = await paginator.page(plan, rows, { url: 'https://x.test/o?offset=3&limit=3&q=1&tag=x', total });
    expect((body as OffsetPage<Order>).items.map((o) => o.id - 2n ** 60n)).toEqual([2n, 1n, 0n]);
    expect((body as OffsetPage<Order>).total).toBe(7);
    expect(headers.link).toBe(
      '<https://x.test/o?offset=6&limit=3&tag=x>; rel="next", <https://x.test/o?offset=0&limit=3&tag=x>; rel="prev", <https://x.test/o?offset=0&limit=3&tag=x>; rel="first"',
    );
    const lastPlan = await paginator.plan(new URLSearchParams('offset=6&limit=3'));
    const end = await paginator.page(lastPlan, orders.slice(6), { url: 'https://x.test/o', total: 7 });
    expect(end.headers.link).toBe('<https://x.test/o?offset=3>; rel="prev", <https://x.test/o?offset=0>; rel="first"');
    // The first page links to neither prev nor first; prev never goes below 0.
    const firstPlan = await paginator.plan(new URLSearchParams('offset=0&limit=3'));
    expect((await paginator.page(firstPlan, orders.slice(0, 3), { url: 'https://x.test/o?offset=0', total: 7 })).headers.link).toBe(
      '<https://x.test/o?offset=3>; rel="next"',
    );
    const nearPlan = await paginator.plan(new URLSearchParams('offset=1&limit=3'));
    expect(linksOf((await paginator.page(nearPlan, orders.slice(1, 4), { url: 'https://x.test/o?offset=1', total: 7 })).headers.link).prev!.href).toBe(
      'https://x.test/o?offset=0',
    );
  });

  describe('backward pages', () => {
    const filters = { status: 'paid' };
    const ids = (page: CursorPage<Order>): bigint[] => page.items.map((o) => o.id - 2n ** 60n);
    async function follow(p: typeof paginator, url: URL, rows: readonly Order[] = orders) {
      const plan = await p.plan(url.searchParams, { filters });
      const { body, headers } = await p.page(plan, paginateArray(rows, plan, plan.sort).rows, { url });
      return { plan, page: body as CursorPage<Order>, links: linksOf(headers.link) };
    }

    it('prevCursor returns the rows just before the page, in sort order; the first page has none', async () => {
      const first = await follow(paginator, new URL(URL_));
      const second = await follow(paginator, first.links.next!);
      expect(ids(second.page)).toEqual([2n, 1n, 0n]);
      expect(second.page.prevCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(second.links.prev!.searchParams.get('cursor')).toBe(second.page.prevCursor);
      // rel="first" is the request without a cursor (cursor is the default mode), other parameters kept.
      expect(second.links.first!.href).toBe(URL_);
      const back = await follow(paginator, second.links.prev!);
      expect(back.plan).toMatchObject({ mode: 'cursor', direction: 'backward' });
      expect(back.page.items).toEqual(first.page.items);
      // Walked back to the start: no prevCursor, no prev/first links; next leads forward again.
      expect(back.page.prevCursor).toBeNull();
      expect(Object.keys(back.links)).toEqual(['next']);
      expect(ids((await follow(paginator, back.links.next!)).page)).toEqual([2n, 1n, 0n]);
    });

    it('a backward page that is not the first keeps a prevCursor (the extra row decides)', async () => {
      const two = new URL(URL_);
      two.searchParams.set('limit', '2');
      const p1 = await follow(paginator, two);
      const p2 = await follow(paginator, p1.links.next!);
      const p3 = await follow(paginator, p2.links.next!);
      const back2 = await follow(paginator, p3.links.prev!);
      expect(back2.page.items).toEqual(p2.page.items);
      expect(back2.page.prevCursor).not.toBeNull();
      expect((await follow(paginator, back2.links.prev!)).page.items).toEqual(p1.page.items);
    });

    it('an empty page (its rows deleted meanwhile) points back to the nearest edge', async () => {
      const first = await follow(paginator, new URL(URL_));
      // Everything after the first page is deleted: the next page is empty...
      const kept = orders.filter((o) => first.page.items.includes(o));
      const empty = await follow(paginator, first.links.next!, kept);
      expect(empty.page).toEqual({ items: [], nextCursor: null, prevCursor: expect.any(String) });
      // ...and its prevCursor leads to the last page of what is left (the end of the collection).
      const last = await follow(paginator, empty.links.prev!, kept);
      expect(last.plan).toMatchObject({ direction: 'backward', after: null });
      expect(last.page.items).toEqual(first.page.items);
      expect(last.page.nextCursor).toBeNull();
      // Walking back into deleted rows: the empty page's nextCursor leads to the first page.
      const second = await follow(paginator, first.links.next!);
      const before = orders.filter((o) => !first.page.items.includes(o));
      const emptyBack = await follow(paginator, second.links.prev!, before);
      expect(emptyBack.page).toEqual({ items: [], nextCursor: expect.any(String), prevCursor: null });
      const restart = await follow(paginator, emptyBack.links.next!, before);
      expect(restart.plan).toMatchObject({ direction: 'forward', after: null });
      expect(restart.page.prevCursor).toBeNull();
      expect(ids(restart.page)).toEqual([2n, 1n, 0n]);
    });

    it('rel="first" carries a start cursor when a cursor-less request would be offset mode', async () => {
      const offsetFirst = createPaginator<Order>({ ...base, defaultMode: 'offset' });
      const start = new URL(URL_);
      start.searchParams.set('cursor', await startCursor(offsetFirst));
      const first = await follow(offsetFirst, start);
      expect(first.page.prevCursor).toBeNull();
      const second = await follow(offsetFirst, first.links.next!);
      expect(second.links.first!.searchParams.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
      const restart = await follow(offsetFirst, second.links.first!);
      expect(restart.plan).toMatchObject({ mode: 'cursor', direction: 'forward', after: null });
      expect(restart.page.items).toEqual(first.page.items);
    });
  });

  it('offset mode without a total uses the extra row and reports total: null', async () => {
    const plan = await paginator.plan(new URLSearchParams('offset=0&limit=3'));
    const more = await paginator.page(plan, orders.slice(0, 4), { url: 'https://x.test/o?offset=0' });
    expect(more.body).toEqual({ items: orders.slice(0, 3), total: null });
    expect(more.headers.link).toBe('<https://x.test/o?offset=3>; rel="next"');
    const end = await paginator.page(plan, orders.slice(0, 3), { url: 'https://x.test/o?offset=0' });
    expect(end.headers.link).toBeUndefined();
  });

  it('limit policy applies: reject over max with max_limit, or clamp', async () => {
    const err = await rejection(paginator.plan(new URLSearchParams('limit=101')));
    expect(err).toMatchObject({ status: 400, code: 'limit_too_large', extensions: { max_limit: 100 } });
    const clamp = createPaginator<Order>({ ...base, limits: { max: 5, overMax: 'clamp' } });
    expect(await clamp.plan(new URLSearchParams('limit=1000'))).toMatchObject({ limit: 5, take: 6 });
    expect(await clamp.plan(new URLSearchParams(''))).toMatchObject({ limit: 5 });
  });

  it('parse errors reach the caller as KeysetErrors', async () => {
    expect((await rejection(paginator.plan(new URLSearchParams('limit=0')))).code).toBe('invalid_limit');
    expect((await rejection(paginator.plan(new URLSearchParams('cursor=x&offset=1')))).code).toBe('conflicting_pagination');
    expect((await rejection(paginator.plan(new URLSearchParams('cursor=garbage')))).code).toBe('invalid_cursor');
    const cursorOnly = createPaginator<Order>({ ...base, modes: ['cursor'] });
    expect(await rejection(cursorOnly.plan(new URLSearchParams('offset=0')))).toMatchObject({ code: 'invalid_request', extensions: { parameter: 'offset' } });
  });

  it('default mode is configurable', async () => {
    const offsets = createPaginator<Order>({ ...base, defaultMode: 'offset' });
    expect(await offsets.plan(new URLSearchParams())).toMatchObject({ mode: 'offset', offset: 0, limit: 20 });
  });

  it('a row that does not hold its declared sort value is a server error (TypeError), not a 400', async () => {
    const plan = await paginator.plan(new URLSearchParams('limit=1'));
    const bad = [{ id: 1n, createdAt: 'not a time', status: 'x' }, orders[0]!];
    await expect(paginator.page(plan, bad, { url: URL_ })).rejects.toThrow(TypeError);
  });

  it.each<[string, Partial<PaginatorOptions>]>([
    ['no endpoint', { endpoint: '' }],
    ['a bad sort', { sort: [{ key: 'id', dir: 'asc', type: 'int' }] }],
    ['bad limits', { limits: { max: 0 } }],
    ['bad modes', { modes: [] }],
    ['defaultMode not allowed', { modes: ['cursor'], defaultMode: 'offset' }],
    ['a short secret', { cursor: { secrets: ['short'] } }],
    ['no cursor options', { cursor: undefined as unknown as PaginatorOptions['cursor'] }],
  ])('refuses %s at creation with ConfigError', (_, options) => {
    expect(() => createPaginator({ ...base, ...options })).toThrow(ConfigError);
  });

  it('does not mutate the caller options and returns a frozen object', () => {
    const options = { ...base, sort: sort.map((k) => ({ ...k })) };
    const copy = structuredClone(options);
    const p = createPaginator(options);
    expect(options).toEqual(copy);
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.sort)).toBe(true);
  });
});

describe('fingerprint memoisation', () => {
  it('keeps cursors bound to their filters after more distinct filter sets than it remembers', async () => {
    const paginator = createPaginator<Order>(base);
    const rows = paginateArray(orders, await paginator.plan(new URLSearchParams('limit=2'), { filters: { status: 'paid' } }), sort).rows;
    const first = await paginator.plan(new URLSearchParams('limit=2'), { filters: { status: 'paid' } });
    const { body } = await paginator.page(first, rows, { url: URL_ });
    const cursor = (body as CursorPage<Order>).nextCursor!;
    // Push the first filter set out of the bounded memo (1024 entries).
    for (let i = 0; i < 1100; i++) await paginator.plan(new URLSearchParams('limit=2'), { filters: { status: `s${i}` } });
    const again = await paginator.plan(new URLSearchParams({ limit: '2', cursor }), { filters: { status: 'paid' } });
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(again.mode === 'cursor' && again.after).toBeTruthy();
    const other = await rejection(paginator.plan(new URLSearchParams({ limit: '2', cursor }), { filters: { status: 's5' } }));
    expect(other.code).toBe('invalid_cursor');
  });
});

describe('client-chosen sort', () => {
  interface Sale {
    id: number;
    createdAt: string;
    amountCents: number;
  }
  const sales: Sale[] = Array.from({ length: 9 }, (_, i) => ({ id: i + 1, createdAt: `2024-05-01 10:00:0${i % 3}+00`, amountCents: (i * 7) % 4 }));
  const sortable = createPaginator<Sale>({
    endpoint: 'GET /api/sales',
    sort: [
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'int', unique: true },
    ],
    sortable: [
      { name: 'createdAt', column: 'created_at', type: 'timestamp' },
      { name: 'amountCents', column: 'amount_cents', type: 'int' },
      { name: 'id', type: 'int', unique: true },
    ],
    cursor: { secrets: [SECRET] },
  });
  const page = async (query: string) => {
    const url = new URL(`https://x.test/api/sales?${query}`);
    const plan = await sortable.plan(url.searchParams);
    const { body, headers } = await sortable.page(plan, paginateArray(sales, plan, plan.sort).rows, { url });
    return { plan, body: body as CursorPage<Sale>, links: linksOf(headers.link) };
  };

  it('orders by ?sort=, tie-breaker appended in the last direction, and the plan carries the order', async () => {
    const { plan, body } = await page('sort=amountCents&limit=9');
    expect(plan.sort.map((k) => `${k.dir} ${k.column}`)).toEqual(['asc amount_cents', 'asc id']);
    expect(body.items.map((s) => [s.amountCents, s.id])).toEqual(
      [...sales].sort((a, b) => a.amountCents - b.amountCents || a.id - b.id).map((s) => [s.amountCents, s.id]),
    );
    expect((await page('sort=-amountCents,-createdAt')).plan.sort.map((k) => `${k.dir} ${k.key}`)).toEqual(['desc amountCents', 'desc createdAt', 'desc id']);
    // No ?sort=: the default order, the same object as paginator.sort.
    expect((await page('limit=2')).plan.sort).toBe(sortable.sort);
  });

  it('binds the order into the cursor: used under another sort it is 400 invalid_cursor; Links keep sort', async () => {
    const first = await page('sort=-amountCents&limit=2');
    expect(first.links.next!.searchParams.get('sort')).toBe('-amountCents');
    const cursor = first.body.nextCursor!;
    const second = await page(`sort=-amountCents&limit=2&cursor=${cursor}`);
    expect(second.links.prev!.searchParams.get('sort')).toBe('-amountCents');
    expect(second.links.first!.href).toBe('https://x.test/api/sales?sort=-amountCents&limit=2');
    for (const other of ['sort=amountCents&', 'sort=-createdAt&', '']) {
      expect((await rejection(page(`${other}limit=2&cursor=${cursor}`))).code).toBe('invalid_cursor');
    }
    // The same order spelt out in full is the same order.
    expect((await page(`sort=-amountCents,-id&limit=2&cursor=${cursor}`)).body.items).toEqual(second.body.items);
  });

  it('refuses unknown, repeated or malformed fields with 400 invalid_sort naming the allowed ones', async () => {
    for (const query of ['sort=price', 'sort=id,id', 'sort=-', 'sort=', 'sort=id&sort=id']) {
      const err = await rejection(page(query));
      expect(err).toMatchObject({ status: 400, code: 'invalid_sort', extensions: { parameter: 'sort', sortable: ['createdAt', 'amountCents', 'id'] } });
    }
    // An endpoint without `sortable` has a fixed order and ignores ?sort=.
    const fixed = createPaginator<Order>(base);
    expect((await fixed.plan(new URLSearchParams('sort=price'))).sort).toBe(fixed.sort);
  });
});

describe('Link header', () => {
  it('moves only the position and keeps the parameters it knows, like URLSearchParams#set; drops the others', async () => {
    const keepParams = ['a', 'x', '0', '-._~'];
    const paginator = createPaginator<Order>({ ...base, keepParams, modes: ['offset', 'cursor'] });
    const unit = fc.constantFrom(...'abcxyz019-._~%20+=&?/:@!$,;'.split(''), 'cursor', 'offset', 'limit', '%2B', '%ZZ');
    await fc.assert(
      fc.asyncProperty(fc.string({ unit, maxLength: 30 }), async (query) => {
        const url = `https://api.example.com/api/orders?${query}&offset=3`;
        const plan = { mode: 'offset', limit: 2, take: 3, offset: 3, sort: paginator.sort, fingerprint: '' } as const;
        const { headers } = await paginator.page(plan, orders.slice(0, 3), { url });
        const expected = new URL(url);
        for (const name of new Set(expected.searchParams.keys())) if (name !== 'limit' && name !== 'offset' && !keepParams.includes(name)) expected.searchParams.delete(name);
        expected.searchParams.set('offset', '5');
        const got = new URL(headers.link!.slice(1, headers.link!.indexOf('>')));
        expect([...got.searchParams]).toEqual([...expected.searchParams]);
        expect(got.origin + got.pathname).toBe('https://api.example.com/api/orders');
      }),
      { numRuns: 500 },
    );
  });

  it('keeps limit, sort (when clients may sort), the plan\'s filters and keepParams, and no other client text', async () => {
    const paginator = createPaginator<Order>({ ...base, keepParams: ['expand', 'fields'], sortable: [{ name: 'id', type: 'bigint', unique: true }] });
    const url = 'https://api.example.com/api/orders?limit=2&sort=-id&status=paid&expand=customer&fields=id&utm_source=x&OiLzh74MVrNeFH1NUbIt=1&q=AbCdEfGh.IjKlMnOp.QrStUvWx';
    const plan = await paginator.plan(new URL(url).searchParams, { filters: { status: 'paid' } });
    const { headers } = await paginator.page(plan, paginateArray(orders, plan, plan.sort).rows, { url });
    const next = new URL(linksOf(headers.link).next!);
    expect([...next.searchParams.keys()]).toEqual(['limit', 'sort', 'status', 'expand', 'fields', 'cursor']);
    expect(headers.link).not.toMatch(/utm|OiLzh74M|AbCdEfGh|IjKlMnOp/);
    // Without sortable, `sort` is no parameter of the endpoint: dropped too.
    const fixed = createPaginator<Order>(base);
    const fixedPlan = await fixed.plan(new URL(url).searchParams);
    const fixedPage = await fixed.page(fixedPlan, paginateArray(orders, fixedPlan, fixed.sort).rows, { url });
    expect([...new URL(linksOf(fixedPage.headers.link).next!).searchParams.keys()]).toEqual(['limit', 'cursor']);
  });

  it('refuses keepParams that are no parameter names, or the position', () => {
    for (const keepParams of [['cursor'], ['offset'], [''], ['a b'], [7], 'expand'] as unknown[]) {
      expect(() => createPaginator({ ...base, keepParams } as PaginatorOptions), JSON.stringify(keepParams)).toThrow(ConfigError);
    }
  });

  it('is always absolute: a relative request URL is a server bug (TypeError), not a relative Link', async () => {
    const paginator = createPaginator<Order>(base);
    const plan = { mode: 'offset', limit: 2, take: 3, offset: 0, sort: paginator.sort, fingerprint: '' } as const;
    for (const url of ['/api/orders?limit=2', 'api/orders', '//api.example.com/api/orders?x=1']) {
      await expect(paginator.page(plan, orders.slice(0, 3), { url })).rejects.toThrow(TypeError);
    }
    const { headers } = await paginator.page(plan, orders.slice(0, 3), { url: 'HTTPS://api.example.com/o?limit=2' });
    expect(headers.link).toMatch(/^<https:\/\/api\.example\.com\/o\?limit=2&offset=2>; rel="next"$/i);
  });
});

describe('lossy sort values from rows', () => {
  const walk = (rows: readonly Record<string, unknown>[]) => async (keys: SortKey[]) => {
    const paginator = createPaginator<Record<string, unknown>>({ endpoint: 'GET /t', sort: keys, cursor: { secrets: [SECRET] } });
    const plan = await paginator.plan(new URLSearchParams('limit=2'));
    return paginator.page(plan, rows.slice(0, plan.take), { url: 'https://api.example.com/t?limit=2' });
  };

  it('the first page with a next page refuses a Date for a microsecond timestamp key, and serves it for one declared precision: \'ms\'', async () => {
    const rows = [0, 1, 2].map((i) => ({ id: String(i), createdAt: new Date(Date.UTC(2024, 4, 1, 10, 0, 0, 3 - i)) }));
    const keys = (precision?: 'ms'): SortKey[] => [
      { key: 'createdAt', dir: 'desc', type: 'timestamp', ...(precision === undefined ? {} : { precision }) },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ];
    await expect(walk(rows)(keys())).rejects.toThrow(ConfigError);
    await expect(walk(rows)(keys())).rejects.toThrow(/"createdAt" \(type timestamp\) got a JS Date/);
    expect((await walk(rows)(keys('ms'))).body).toMatchObject({ nextCursor: expect.any(String) });
    expect(() => createPaginator({ endpoint: 'GET /t', sort: [{ key: 'id', dir: 'asc', type: 'bigint', unique: true, precision: 'ms' }], cursor: { secrets: [SECRET] } })).toThrow(
      /precision: 'ms' or 'us', on a timestamp key only/,
    );
  });

  it('reads cursors from the exact values a query helper attached (keysetSortValues), and leaves them out of the items', async () => {
    const keys: SortKey[] = [
      { key: 'createdAt', dir: 'asc', type: 'timestamp' },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ];
    const rows = [1, 2, 3].map((i) => ({
      id: 2 ** 53 + 2 * i, // as a driver rounds it: no exact id in the user's selection
      createdAt: new Date(Date.UTC(2024, 4, 1)),
      keysetSortValues: { createdAt: `2024-05-01 00:00:00.00000${i}+00`, id: String(2n ** 53n + BigInt(2 * i + 1)) },
    }));
    const paginator = createPaginator<Record<string, unknown>>({ endpoint: 'GET /t', sort: keys, cursor: { secrets: [SECRET] } });
    const first = await paginator.page(await paginator.plan(new URLSearchParams('limit=2')), rows, { url: 'https://api.example.com/t?limit=2' });
    const body = first.body as CursorPage<Record<string, unknown>>;
    expect(body.items).toEqual([{ id: rows[0]!.id, createdAt: rows[0]!.createdAt }, { id: rows[1]!.id, createdAt: rows[1]!.createdAt }]);
    const next = await paginator.plan(new URLSearchParams({ limit: '2', cursor: body.nextCursor! }));
    expect(next).toMatchObject({ after: ['2024-05-01 00:00:00.000002+00', String(2n ** 53n + 5n)] });
    // A non-enumerable one (what @keyset/kysely attaches) is read too, and items keep their identity.
    const hidden = rows.map(({ keysetSortValues, ...rest }) => Object.defineProperty(rest, 'keysetSortValues', { value: keysetSortValues, enumerable: false }));
    const again = (await paginator.page(await paginator.plan(new URLSearchParams('limit=2')), hidden, { url: 'https://api.example.com/t?limit=2' })).body as CursorPage<Record<string, unknown>>;
    expect(again.items[0]).toBe(hidden[0]);
    expect((await paginator.plan(new URLSearchParams({ limit: '2', cursor: again.nextCursor! }))).mode === 'cursor').toBe(true);
    expect(JSON.stringify(again.items[0])).not.toContain('keysetSortValues');
  });
});
