import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaginationCycleError, PaginationFormatError, PaginationHttpError } from './errors.ts';
import { pages, paginate, retryAfterSeconds } from './paginate.ts';

type Handler = (url: URL, req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base: string;
let handler: Handler = () => {};
const requests: { url: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    requests.push({ url: url.href, authorization: req.headers.authorization });
    handler(url, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A cursor-mode server over `rows` (not signed: this is the client's test). A forward
 * cursor is the index of the page's first row; a backward one, `b<i>`, the rows before index i.
 */
function cursorServer(rows: number[], { link }: { link: boolean }): Handler {
  return (url, _req, res) => {
    const limit = Number(url.searchParams.get('limit') ?? '3');
    const cursor = url.searchParams.get('cursor') ?? '0';
    const start = cursor.startsWith('b') ? Math.max(0, Number(cursor.slice(1)) - limit) : Number(cursor);
    const items = rows.slice(start, start + limit).map((id) => ({ id }));
    const nextCursor = start + limit < rows.length ? String(start + limit) : null;
    const prevCursor = start > 0 ? `b${start}` : null;
    const links: string[] = [];
    for (const [rel, value] of [['next', nextCursor], ['prev', prevCursor]] as const) {
      if (!link || value === null) continue;
      const target = new URL(url);
      target.searchParams.set('cursor', value);
      links.push(`<${target.href}>; rel="${rel}"`);
    }
    json(res, 200, { items, nextCursor, prevCursor }, links.length === 0 ? {} : { link: links.join(', ') });
  };
}

function offsetServer(rows: number[]): Handler {
  return (url, _req, res) => {
    const limit = Number(url.searchParams.get('limit') ?? '3');
    const offset = Number(url.searchParams.get('offset') ?? '0');
    json(res, 200, { items: rows.slice(offset, offset + limit).map((id) => ({ id })), total: rows.length });
  };
}

async function fromAsync<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of source) out.push(x);
  return out;
}

async function collect(url: string, options = {}): Promise<number[]> {
  const ids: number[] = [];
  for await (const item of paginate<{ id: number }>(url, options)) ids.push(item.id);
  return ids;
}

describe('paginate', () => {
  it('walks a cursor collection by nextCursor, sending the key only in the header', async () => {
    handler = cursorServer([1, 2, 3, 4, 5, 6, 7], { link: false });
    requests.length = 0;
    expect(await collect(`${base}/api/orders?limit=3&status=paid`, { apiKey: 'ks_test_key' })).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.authorization).toBe('ApiKey ks_test_key');
      expect(r.url).not.toContain('ks_test_key');
      expect(new URL(r.url).searchParams.get('status')).toBe('paid');
    }
  });

  it('follows the Link header when the server sends one', async () => {
    handler = cursorServer([10, 20, 30, 40], { link: true });
    expect(await collect(`${base}/x?limit=2`)).toEqual([10, 20, 30, 40]);
  });

  it('walks an offset collection until total', async () => {
    handler = offsetServer([1, 2, 3, 4, 5]);
    requests.length = 0;
    expect(await collect(`${base}/x?limit=2&offset=0`)).toEqual([1, 2, 3, 4, 5]);
    expect(requests.map((r) => new URL(r.url).searchParams.get('offset'))).toEqual(['0', '2', '4']);
  });

  it('walks an offset collection without Link headers whatever its total says: estimated low, capped, or not counted', async () => {
    const rows = [1, 2, 3, 4, 5, 6, 7];
    for (const extra of [{ total: 3, totalEstimated: true }, { total: 4, totalAtLeast: true }, { total: null }]) {
      handler = (url, _req, res) => {
        const offset = Number(url.searchParams.get('offset') ?? '0');
        json(res, 200, { items: rows.slice(offset, offset + 2).map((id) => ({ id })), ...extra });
      };
      expect(await collect(`${base}/x?limit=2&offset=0`), JSON.stringify(extra)).toEqual(rows);
      const [first] = await fromAsync(pages(`${base}/x?limit=2&offset=0`, { maxPages: 1 }));
      expect(first).toMatchObject({ totalEstimated: 'totalEstimated' in extra, totalAtLeast: 'totalAtLeast' in extra });
    }
  });

  it('walks any dataset with any page size, in both modes, exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.nat(), { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), fc.boolean(), async (rows, limit, offsetMode) => {
        handler = offsetMode ? offsetServer(rows) : cursorServer(rows, { link: false });
        expect(await collect(`${base}/x?limit=${limit}`)).toEqual(rows);
      }),
      { numRuns: 40 },
    );
  });

  it('walks backward from any page: pages in reverse, items in reverse order from paginate()', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.nat(), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom('cursor', 'link', 'offset'),
        fc.nat(),
        async (rows, limit, mode, k) => {
          handler = mode === 'offset' ? offsetServer(rows) : cursorServer(rows, { link: mode === 'link' });
          const start = (k % Math.ceil(rows.length / limit)) * limit;
          const from = `${base}/x?limit=${limit}&${mode === 'offset' ? 'offset' : 'cursor'}=${start}`;
          const seen: number[][] = [];
          for await (const page of pages<{ id: number }>(from, { direction: 'backward' })) seen.push(page.items.map((i) => i.id));
          const expected: number[][] = [];
          for (let s = start; s >= 0; s -= limit) expected.push(rows.slice(s, s + limit));
          expect(seen).toEqual(expected);
          expect(await collect(from, { direction: 'backward' })).toEqual(rows.slice(0, start + limit).reverse());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a page reports both neighbours, from the Link header or the body', async () => {
    handler = cursorServer([1, 2, 3, 4, 5], { link: true });
    const [page] = await fromAsync(pages(`${base}/x?limit=2&cursor=2`, { maxPages: 1 }));
    expect(page).toMatchObject({ next: `${base}/x?limit=2&cursor=4`, prev: `${base}/x?limit=2&cursor=b2` });
    handler = offsetServer([1, 2, 3, 4, 5]);
    const [first] = await fromAsync(pages(`${base}/x?limit=2&offset=0`, { maxPages: 1 }));
    expect(first).toMatchObject({ next: `${base}/x?limit=2&offset=2`, prev: null });
    await expect(fromAsync(pages(`${base}/x`, { direction: 'sideways' as 'forward' }))).rejects.toThrow(TypeError);
  });

  it('throws on a cursor cycle instead of looping forever', async () => {
    handler = (url, _req, res) => json(res, 200, { items: [{ id: 1 }], nextCursor: url.searchParams.get('cursor') === 'b' ? 'a' : 'b' });
    await expect(collect(`${base}/x?cursor=a`)).rejects.toBeInstanceOf(PaginationCycleError);
  });

  it('waits out a 429 for Retry-After seconds, then continues', async () => {
    let calls = 0;
    handler = (_url, _req, res) => {
      calls++;
      if (calls === 1) json(res, 429, { code: 'rate_limited' }, { 'retry-after': '1' });
      else json(res, 200, { items: [{ id: 9 }], nextCursor: null });
    };
    const started = Date.now();
    expect(await collect(`${base}/x`)).toEqual([9]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(calls).toBe(2);
  });

  it('gives up on a 429 whose Retry-After is longer than allowed, keeping the problem', async () => {
    handler = (_url, _req, res) => json(res, 429, { code: 'rate_limited' }, { 'retry-after': '3600' });
    const err = await collect(`${base}/x`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationHttpError);
    expect((err as PaginationHttpError).status).toBe(429);
    expect((err as PaginationHttpError).problem?.code).toBe('rate_limited');
  });

  it('surfaces a problem response as PaginationHttpError without the key in the message', async () => {
    handler = (_url, _req, res) => json(res, 401, { code: 'invalid_api_key' });
    const err = await collect(`${base}/x`, { apiKey: 'ks_secret_value' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationHttpError);
    expect((err as Error).message).toContain('invalid_api_key');
    expect((err as Error).message).not.toContain('ks_secret_value');
  });

  it('stops after maxPages and honours an abort signal', async () => {
    handler = cursorServer(Array.from({ length: 50 }, (_, i) => i), { link: false });
    const seen: number[] = [];
    for await (const page of pages(`${base}/x?limit=5`, { maxPages: 2 })) seen.push(page.items.length);
    expect(seen).toEqual([5, 5]);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(collect(`${base}/x`, { signal: controller.signal })).rejects.toThrow('stop');
  });
});

describe('paginate: credentials stay on the first origin', () => {
  it('refuses a next link to another origin instead of sending the key there', async () => {
    // Same server, other origin (localhost vs 127.0.0.1): a hostile or misconfigured Link
    // header must not receive the Authorization header or the caller's extra headers.
    handler = (url, _req, res) => {
      const other = new URL(url.href.replace('127.0.0.1', 'localhost'));
      other.searchParams.set('cursor', 'next');
      json(res, 200, { items: [{ id: 1 }], nextCursor: 'next' }, { link: `<${other.href}>; rel="next"` });
    };
    requests.length = 0;
    const ids: number[] = [];
    const err = await (async () => {
      for await (const item of paginate<{ id: number }>(`${base}/x`, { apiKey: 'ks_secret_value', headers: { 'x-tenant': 't1' } })) ids.push(item.id);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationFormatError);
    expect((err as Error).message).not.toContain('ks_secret_value');
    expect(ids).toEqual([1]);
    expect(requests).toHaveLength(1);
  });

  it('still follows links to other paths and relative links on the same origin', async () => {
    handler = (url, _req, res) => {
      if (url.pathname === '/x') json(res, 200, { items: [{ id: 1 }], nextCursor: null }, { link: '</y?cursor=2>; rel="next"' });
      else json(res, 200, { items: [{ id: 2 }], nextCursor: null });
    };
    expect(await collect(`${base}/x`, { apiKey: 'k' })).toEqual([1, 2]);
  });
});

describe('retryAfterSeconds', () => {
  it('reads delay-seconds and HTTP-dates', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });

  it('does not read junk as a date in the past (which would retry at once)', () => {
    // Date.parse reads '1.5' as 2001-01-05 and '-1' as the year -1.
    for (const junk of ['1.5', '-1', '1e3', '5 seconds', 'Nov 6 1994']) expect(retryAfterSeconds(junk)).toBeUndefined();
    expect(retryAfterSeconds('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(0);
    expect(retryAfterSeconds(' 12 ')).toBe(12);
  });
});
