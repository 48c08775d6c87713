/**
 * Issue 9, item 7: the `Host` header must not choose the origin of `Link` URLs once the
 * operator has said where the API lives (`PUBLIC_URL`), on both adapters. Requests go
 * through node:http, which lets the test send any `Host`.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type TestApi } from './helpers.ts';
import { ADAPTERS } from '../src/config.ts';

function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; link: string | undefined }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, link: Array.isArray(res.headers.link) ? res.headers.link.join(', ') : res.headers.link }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(ADAPTERS)('Link origin on %s', (adapter) => {
  let pinned: TestApi;
  let unpinned: TestApi;
  const keys = new Map<TestApi, string>();

  beforeAll(async () => {
    pinned = await startApi({ adapter, seedOrders: 30, publicUrl: 'https://api.example.com' });
    unpinned = await startApi({ adapter, seedOrders: 30 });
    for (const t of [pinned, unpinned]) {
      const admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
      const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
      keys.set(t, issued.body.key as string);
    }
  }, 120_000);

  afterAll(async () => {
    await pinned?.stop({ remove: true });
    await unpinned?.stop({ remove: true });
  });

  it('with PUBLIC_URL, every Link points at it whatever Host and X-Forwarded-Host say', async () => {
    for (const headers of [{ host: 'evil.example' }, { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }, {}]) {
      const res = await get(pinned.api.url, '/api/orders?limit=2', { authorization: `ApiKey ${keys.get(pinned)}`, ...headers });
      expect(res.status).toBe(200);
      expect(res.link).toMatch(/^<https:\/\/api\.example\.com\/api\/orders\?/);
      expect(res.link).not.toContain('evil');
    }
  });

  it('without it, the origin comes from the request, as docs/security.md warns', async () => {
    const res = await get(unpinned.api.url, '/api/orders?limit=2', { authorization: `ApiKey ${keys.get(unpinned)}`, host: 'evil.example' });
    expect(res.status).toBe(200);
    expect(res.link).toMatch(/^<http:\/\/evil\.example\/api\/orders\?/);
  });
});
