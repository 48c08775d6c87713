/**
 * Which headers reach the client from `sendPage()` behind `apiKey()`: the page's response is
 * built from one plain header record (RateLimit, Link, content type, in the order a `Headers`
 * object lists them), and a response the handler builds instead still gets the RateLimit headers.
 */
import { paginateArray } from '@keyset/core';
import { createConformanceFixture } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, paginate, problemHandler, sendPage } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

const route = (answer: 'sendPage' | 'sendPage-then-own' | 'extra') =>
  problemHandler()(apiKey({ guard: fixture.guard, scopes: ['items:read'] })(async (request) => {
      const page = await paginate(request, fixture.paginator);
      const { rows } = paginateArray(fixture.items, page, fixture.sort);
      if (answer === 'extra') return sendPage(page, rows, { headers: { 'cache-control': 'no-store' } });
      const sent = await sendPage(page, rows);
      return answer === 'sendPage' ? sent : Response.json({ own: true }, { status: 202 });
    }));

const get = (answer: Parameters<typeof route>[0]) =>
  route(answer)(new Request('http://localhost/items?limit=2', { headers: { authorization: `ApiKey ${fixture.keys.reader}` } }));

describe('sendPage() headers behind apiKey()', () => {
  it('sends RateLimit, Link and the JSON content type, named as a Headers object lists them', async () => {
    const res = await get('sendPage');
    expect(res.status).toBe(200);
    expect([...res.headers.keys()]).toEqual(['content-type', 'link', 'ratelimit', 'ratelimit-policy']);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('link')).toMatch(/rel="next"/);
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
  });

  it('gives a response the handler built after sendPage() the RateLimit headers', async () => {
    const res = await get('sendPage-then-own');
    expect(res.status).toBe(202);
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('ratelimit-policy')).toEqual(expect.any(String));
  });

  it('keeps extra headers, and the RateLimit headers with them', async () => {
    const res = await get('extra');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('content-type')).toBe('application/json');
  });
});
