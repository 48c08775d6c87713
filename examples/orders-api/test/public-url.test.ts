/**
 * The `Host` header must not choose the origin of `Link` URLs once the
 * operator has said where the API lives (`PUBLIC_URL`), on every adapter. Requests go
 * through node:http, which lets the test send any `Host`. Every adapter serves one database
 * (`serveAlso`): one PGlite for the whole file.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';
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

// One database for every adapter: each gets a pinned and an unpinned server over it.
let t: TestApi;
let reader: string;
beforeAll(async () => {
  t = await startApi({ seedOrders: 30 });
  const issued = await call(t.api.url, '/api/keys', { key: t.api.adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
  reader = issued.body.key as string;
}, 60_000);
afterAll(() => t?.stop({ remove: true }));

describe.each(ADAPTERS)('Link origin on %s', (adapter) => {
  let pinned: ExtraServer;
  let unpinned: ExtraServer;

  beforeAll(async () => {
    pinned = await serveAlso(t, adapter, { publicUrl: 'https://api.example.com' });
    unpinned = await serveAlso(t, adapter);
  });

  afterAll(async () => {
    await pinned?.close();
    await unpinned?.close();
  });

  it('with PUBLIC_URL, every Link points at it whatever Host and X-Forwarded-Host say', async () => {
    for (const headers of [{ host: 'evil.example' }, { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }, {}]) {
      const res = await get(pinned.url, '/api/orders?limit=2', { authorization: `ApiKey ${reader}`, ...headers });
      expect(res.status).toBe(200);
      expect(res.link).toMatch(/^<https:\/\/api\.example\.com\/api\/orders\?/);
      expect(res.link).not.toContain('evil');
    }
  });

  it('without it, the origin comes from the request, as docs/security.md warns', async () => {
    const res = await get(unpinned.url, '/api/orders?limit=2', { authorization: `ApiKey ${reader}`, host: 'evil.example' });
    expect(res.status).toBe(200);
    expect(res.link).toMatch(/^<http:\/\/evil\.example\/api\/orders\?/);
  });
});
