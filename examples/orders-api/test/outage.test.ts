/**
 * The 503 `unavailable` of docs/errors.md through the example, on both adapters: when the database stops
 * accepting connections, a key the cache does not know is refused with 503
 * `unavailable` (keys fail closed), no request yields a 500, and service resumes when
 * the database comes back. Uses a real PostgreSQL (skips when none answers).
 */
import { generateKey } from '@keyset/core';
import { postgresUrl } from '@keyset/test-support';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type TestApi } from './helpers.ts';
import { ADAPTERS } from '../src/config.ts';

const serverUrl = await postgresUrl();

describe.skipIf(serverUrl === undefined).each(ADAPTERS)('database outage on %s', (adapter) => {
  const database = `orders_outage_${adapter}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let t: TestApi;
  let admin: pg.Client;
  let reader: string;

  async function cutOff(): Promise<void> {
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  }

  async function restore(): Promise<void> {
    await admin.query(`ALTER DATABASE ${database} WITH ALLOW_CONNECTIONS true`);
  }

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    t = await startApi({ adapter, databaseUrl: url.href, seedOrders: 200 });
    const adminKey = existsSync(join(t.dataDir, 'admin.key')) ? readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim() : '';
    const issued = await call(t.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    reader = issued.body.key;
    expect((await call(t.api.url, '/api/orders?limit=5', { key: reader })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await restore().catch(() => undefined);
    await t?.stop({ remove: true }).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('answers 503 unavailable for an uncached key, never a 500, and recovers', async () => {
    await cutOff();
    try {
      const unknown = generateKey(t.api.config.keyPrefix);
      const refused = await call(t.api.url, '/api/orders?limit=5', { key: unknown });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ status: 503, code: 'unavailable' });
      // A key still in the verification cache passes authentication; the orders query
      // then fails for the same reason, and that too is a 503, not a 500.
      const cached = await call(t.api.url, '/api/orders?limit=5', { key: reader });
      expect(cached.status).toBe(503);
      expect(cached.body.code).toBe('unavailable');
      // Nothing of the key reached the problem bodies.
      expect(refused.text).not.toContain(unknown.slice(-10));
    } finally {
      await restore();
    }
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await call(t.api.url, '/api/orders?limit=5', { key: reader })).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  }, 30_000);
});
