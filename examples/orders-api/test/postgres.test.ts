/**
 * DATABASE_URL: four instances (one per adapter) on one fresh PostgreSQL database,
 * started at the same time. They must migrate, seed and bootstrap the admin key once,
 * and a cursor from one must work on the others (shared CURSOR_SECRETS).
 * Skips when no PostgreSQL answers (see test/support/services.ts).
 */
import { postgresUrl } from '@keyset/test-support';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, createDatabase, dropDatabase, nextLink, startApi, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();
const SEED = 1500;
const SECRET = 'test-cursor-secret-0123456789-abcdefghij';

describe.skipIf(serverUrl === undefined)('orders API on PostgreSQL, one instance per adapter', () => {
  const database = `orders_api_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let databaseUrl: string;
  let instances: TestApi[] = [];
  let a: TestApi;
  let reader: string;

  beforeAll(async () => {
    databaseUrl = await createDatabase(serverUrl!, database);
    const common = { databaseUrl, seedOrders: SEED, cursorSecrets: [SECRET] };
    instances = await Promise.all(ADAPTERS.map((adapter) => startApi({ ...common, adapter })));
    a = instances[0]!;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map((t) => t.stop({ remove: true })));
    await dropDatabase(serverUrl!, database);
  });

  it('seeded once and created one admin key, written by the instance that created it', async () => {
    const { rows } = await a.api.db.query<{ n: string }>('SELECT count(*)::text AS n FROM orders');
    expect(Number(rows[0]!.n)).toBe(SEED);
    const files = instances.filter((t) => existsSync(join(t.dataDir, 'admin.key')));
    expect(files).toHaveLength(1);
    const adminKey = readFileSync(join(files[0]!.dataDir, 'admin.key'), 'utf8').trim();
    const keys = await call(a.api.url, '/api/keys', { key: adminKey });
    expect(keys.body.items).toHaveLength(1);
    const issued = await call(instances[1]!.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read', 'reports:read'] } });
    expect(issued.status).toBe(201);
    reader = issued.body.key;
  });

  it('walks all orders, each page from the next instance, in database order with microseconds', async () => {
    const seen: { id: number; createdAt: string }[] = [];
    let path: string | null = '/api/orders?limit=100';
    for (let page = 0; path !== null; page++) {
      const base = instances[page % instances.length]!.api.url;
      const res = await call(base, path, { key: reader });
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.items);
      const next = nextLink(res.headers);
      path = next === null ? null : new URL(next).pathname + new URL(next).search;
    }
    const { rows } = await a.api.db.query<{ order_id: string; ts: string }>(
      `SELECT id::text AS order_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts
       FROM orders ORDER BY created_at DESC, id DESC`,
    );
    expect(seen.map((o) => `${o.id} ${o.createdAt}`)).toEqual(rows.map((r) => `${r.order_id} ${r.ts}`));
    for (const t of instances) {
      const offset = await call(t.api.url, '/api/orders?offset=1400&limit=100', { key: reader });
      expect(offset.body.total, t.api.config.adapter).toBe(SEED);
      expect(offset.body.items.map((o: { id: number }) => o.id)).toEqual(seen.slice(1400).map((o) => o.id));
    }
  });

  it('serves the daily report from PostgreSQL', async () => {
    const { rows } = await a.api.db.query<{ day: string; n: string }>(
      `SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, count(*)::text AS n
       FROM orders GROUP BY 1 ORDER BY 1 DESC LIMIT 1 OFFSET 3`,
    );
    const res = await call(a.api.url, `/api/reports/daily?date=${rows[0]!.day}`, { key: reader });
    expect(res.status).toBe(200);
    expect(res.body.orderCount).toBe(Number(rows[0]!.n));
  });
});
