/**
 * Two apiKey() layers on one request (an outer guard with the legacy X-RateLimit headers, an
 * inner one with RateLimit): a page sent by sendPage() carries both guards' headers, as any
 * other response does (each layer adds its headers where the response lacks them).
 */
import { createApiKeyGuard, createRateLimiter, paginateArray } from '@keyset/core';
import { createConformanceFixture } from '@keyset/conformance';
import type { ConformanceFixture } from '@keyset/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, paginate, sendPage } from './index.ts';

let fixture: ConformanceFixture;
beforeAll(async () => {
  fixture = await createConformanceFixture();
});
afterAll(() => fixture.close());

describe('sendPage() behind two apiKey() layers', () => {
  it.each(['sendPage', 'own'] as const)('a %s response gets the headers of both guards', async (answer) => {
    const outer = createApiKeyGuard({ keyring: fixture.keyring, limiter: createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, headers: 'legacy' }) });
    const handler = apiKey({ guard: outer })(apiKey({ guard: fixture.guard, scopes: ['items:read'] })(async (request) => {
      const page = await paginate(request, fixture.paginator);
      const { rows } = paginateArray(fixture.items, page, fixture.sort);
      return answer === 'sendPage' ? sendPage(page, rows) : Response.json({ rows });
    }));
    const res = await handler(new Request('http://localhost/items?limit=2', { headers: { authorization: `ApiKey ${fixture.keys.reader}` } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });
});
