/**
 * A PostgreSQL that stops answering with its connections still open (a stopped process,
 * a partition, a frozen VM) must not hold requests for as long as it lasts: with
 * `DATABASE_QUERY_TIMEOUT_MS`, a query that gets no answer fails, and the request is a
 * 503 `unavailable` problem, on the cached-key path (the orders query), the uncached-key
 * path (the key store lookup) and the admin path (an insert), also once the pool must
 * open new connections. When the database answers again, so does the API.
 * The freeze is a TCP proxy the test controls in front of the real server (no other user
 * of the server is affected). Skips when no PostgreSQL answers (TEST_DATABASE_URL).
 */
import { generateKey } from '@keyset/core';
import { postgresUrl, startTcpProxy, type TcpProxy } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type Reply, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();

function expectUnavailable(reply: Reply, what: string): void {
  expect(reply.status, `${what}: ${reply.text.slice(0, 200)}`).toBe(503);
  expect(reply.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
  expect(reply.body, what).toMatchObject({ status: 503, code: 'unavailable' });
}

describe.skipIf(serverUrl === undefined).each(['hono', 'express'] as const)('PostgreSQL frozen under the %s server', (adapter) => {
  const database = `orders_frozen_${adapter}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: pg.Client;
  let proxy: TcpProxy;
  let t: TestApi;
  let adminKey: string;
  let reader: string;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    proxy = await startTcpProxy(serverUrl!);
    const url = new URL(serverUrl!);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    url.pathname = `/${database}`;
    // Shorter than the default 5 s, so the test is quick, yet far above what a trivial
    // query or a connection takes on a loaded machine (start-up runs under this bound too).
    t = await startApi({ adapter, databaseUrl: url.href, seedOrders: 50, databaseQueryTimeoutMs: 2_000 });
    adminKey = t.api.adminKey!;
    const issued = await call(t.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    reader = issued.body.key;
    // Both keys are now in the verification cache: their requests reach the orders query.
    expect((await call(t.api.url, '/api/orders?limit=5', { key: reader })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    proxy?.thaw();
    await t?.stop({ remove: true }).catch(() => undefined);
    await proxy?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  it('answers 503 unavailable instead of hanging, on every path, and recovers after the thaw', async () => {
    proxy.freeze();
    try {
      // Twice: the first round's connections are dropped by the timeout, so the second
      // round needs new ones, and opening a connection is bounded too.
      for (const round of [1, 2]) {
        const [orders, unknownKey, issue, health] = await Promise.all([
          call(t.api.url, '/api/orders?limit=5', { key: reader }),
          call(t.api.url, '/api/orders?limit=5', { key: generateKey(t.api.config.keyPrefix) }),
          call(t.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: `during freeze ${round}`, scopes: ['orders:read'] } }),
          call(t.api.url, '/healthz'),
        ]);
        expectUnavailable(orders, `round ${round}: orders with a cached key`);
        expectUnavailable(unknownKey, `round ${round}: a key the cache does not know`);
        expectUnavailable(issue, `round ${round}: issuing a key`);
        expectUnavailable(health, `round ${round}: the health check`);
      }
    } finally {
      proxy.thaw();
    }
    expect((await call(t.api.url, '/api/orders?limit=5', { key: reader })).status).toBe(200);
    const issued = await call(t.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'after the thaw', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    // What the log says: the database did not answer, at error level, never a key.
    const failures = t.logs.filter((line) => line.includes('"statusCode":503'));
    expect(failures.length).toBeGreaterThanOrEqual(6);
    expect(t.logs.join('\n')).not.toContain(reader.slice(-12));
    expect(t.logs.some((line) => line.includes('"statusCode":500'))).toBe(false);
  }, 60_000);
});
