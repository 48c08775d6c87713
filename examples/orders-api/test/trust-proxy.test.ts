/**
 * `TRUST_PROXY`: behind the proxies the operator names, a key's IP allowlist applies to
 * the client's address from `X-Forwarded-For`; without it, that header is ignored and the
 * socket's peer is the client, so a client cannot claim an allowed address. On every
 * adapter, over one database (`serveAlso`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

let t: TestApi;
let key: string;
beforeAll(async () => {
  t = await startApi({ seedOrders: 5 });
  const issued = await call(t.api.url, '/api/keys', {
    key: t.api.adminKey,
    method: 'POST',
    body: { name: 'office only', scopes: ['orders:read'], ipAllowlist: ['203.0.113.7/32'], rateLimit: { limit: 1000, windowSeconds: 1 } },
  });
  expect(issued.status, issued.text).toBe(201);
  key = issued.body.key as string;
}, 60_000);
afterAll(() => t?.stop({ remove: true }));

describe.each(ADAPTERS)('TRUST_PROXY on %s', (adapter) => {
  let behindOne: ExtraServer;
  let direct: ExtraServer;
  beforeAll(async () => {
    behindOne = await serveAlso(t, adapter, { trustProxy: { hops: 1 } });
    direct = await serveAlso(t, adapter);
  });
  afterAll(async () => {
    await behindOne?.close();
    await direct?.close();
  });

  const orders = (server: ExtraServer, forwardedFor?: string) =>
    call(server.url, '/api/orders?limit=1', { key, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });

  it('behind one trusted proxy, the address the proxy appended is the client', async () => {
    expect((await orders(behindOne, '203.0.113.7')).status).toBe(200);
    const other = await orders(behindOne, '198.51.100.1');
    expect([other.status, other.body?.code]).toEqual([403, 'ip_not_allowed']);
    // A client that writes the allowed address itself: the proxy appends the real one, which is what counts.
    const spoofed = await orders(behindOne, '203.0.113.7, 198.51.100.1');
    expect([spoofed.status, spoofed.body?.code]).toEqual([403, 'ip_not_allowed']);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: the socket peer (127.0.0.1) is the client', async () => {
    const claimed = await orders(direct, '203.0.113.7');
    expect([claimed.status, claimed.body?.code]).toEqual([403, 'ip_not_allowed']);
  });
});
