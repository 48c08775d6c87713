import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaginationCycleError, PaginationHttpError } from './errors.ts';
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

/** A cursor-mode server over `rows`; the cursor is the index of the next row (not signed: this is the client's test). */
function cursorServer(rows: number[], { link }: { link: boolean }): Handler {
  return (url, _req, res) => {
    const limit = Number(url.searchParams.get('limit') ?? '3');
    const start = Number(url.searchParams.get('cursor') ?? '0');
    const items = rows.slice(start, start + limit).map((id) => ({ id }));
    const more = start + limit < rows.length;
    const nextCursor = more ? String(start + limit) : null;
    const headers: Record<string, string> = {};
    if (link && nextCursor !== null) {
      const next = new URL(url);
      next.searchParams.set('cursor', nextCursor);
      headers.link = `<${next.href}>; rel="next"`;
    }
    json(res, 200, { items, nextCursor }, headers);
  };
}

function offsetServer(rows: number[]): Handler {
  return (url, _req, res) => {
    const limit = Number(url.searchParams.get('limit') ?? '3');
    const offset = Number(url.searchParams.get('offset') ?? '0');
    json(res, 200, { items: rows.slice(offset, offset + limit).map((id) => ({ id })), total: rows.length });
  };
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

  it('walks any dataset with any page size, in both modes, exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.nat(), { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), fc.boolean(), async (rows, limit, offsetMode) => {
        handler = offsetMode ? offsetServer(rows) : cursorServer(rows, { link: false });
        expect(await collect(`${base}/x?limit=${limit}`)).toEqual(rows);
      }),
      { numRuns: 40 },
    );
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

describe('retryAfterSeconds', () => {
  it('reads delay-seconds and HTTP-dates', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
