/**
 * Two apiKey() layers on one request (an outer guard with the legacy X-RateLimit headers, an
 * inner one with RateLimit): every response carries both guards' headers — a page sent by
 * sendPage(), a handler's own response, and a problem — as each layer adds its headers where
 * the response lacks them.
 */
import { createApiKeyGuard, createRateLimiter, paginateArray } from '@keyset/core';
import { createConformanceFixture } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, paginate, problemHandler, sendPage } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

describe('two apiKey() layers', () => {
  it.each(['sendPage', 'own', 'problem'] as const)('a %s response gets the headers of both guards', async (answer) => {
    const outer = createApiKeyGuard({ keyring: fixture.keyring, limiter: createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, headers: 'legacy' }) });
    const app = new Hono();
    app.onError(problemHandler());
    app.use('/items', apiKey({ guard: outer }));
    app.use('/items', apiKey({ guard: fixture.guard, scopes: ['items:read'] }));
    app.get('/items', paginate(fixture.paginator), (c) => {
      if (answer === 'problem') throw new Error('boom');
      const { rows } = paginateArray(fixture.items, c.var.page, fixture.sort);
      return answer === 'sendPage' ? sendPage(c, rows) : c.json({ rows });
    });
    const res = await app.request('/items?limit=2', { headers: { authorization: `ApiKey ${fixture.keys.reader}` } });
    expect(res.status).toBe(answer === 'problem' ? 500 : 200);
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });
});
