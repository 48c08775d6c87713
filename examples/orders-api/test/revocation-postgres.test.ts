/**
 * With DATABASE_URL the example wires the PostgreSQL LISTEN/NOTIFY
 * revocation bus, so a key revoked on one instance is refused by another as soon as the
 * DELETE has answered (it used to work there for the cache TTL, 29.7 s). Also when the bus
 * is down: an instance that loses its listening session drops its cached keys, and
 * during a Redis outage the PostgreSQL bus still carries the revocation.
 * Real PostgreSQL (TEST_DATABASE_URL); the Redis of the last test is this file's own
 * redis-server, killed by PID.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killRedis, ownRedisAvailable, postgresUrl, startRedis } from '@keyset/test-support';
import { call, startApi, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();
const redisAvailable = ownRedisAvailable();
const SECRET = 'revocation-test-cursor-secret-0123456789';

async function createDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return url.href;
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

/** Waits until `t` has logged a line containing `text` (an event, not a time budget). */
async function logged(t: TestApi, text: string, from = 0): Promise<number> {
  for (;;) {
    const index = t.logs.findIndex((line, i) => i >= from && line.includes(text));
    if (index >= 0) return index;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function sessionName(): string {
  return 'keyset-bus:keyset_revocations';
}

describe.skipIf(serverUrl === undefined)('revocation across instances with DATABASE_URL only (PostgreSQL LISTEN/NOTIFY)', () => {
  const database = `orders_api_bus_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let a: TestApi;
  let b: TestApi;
  let admin: string;

  const issue = async () => {
    const res = await call(a.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'bus', scopes: ['orders:read'] } });
    expect(res.status, res.text).toBe(201);
    return res.body as { key: string; id: string };
  };

  beforeAll(async () => {
    const databaseUrl = await createDatabase(database);
    const common = { databaseUrl, seedOrders: 20, cursorSecrets: [SECRET] };
    a = await startApi({ ...common, adapter: 'hono' });
    b = await startApi({ ...common, adapter: 'express' });
    admin = a.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((t) => t.stop({ remove: true })));
    await dropDatabase(database);
  });

  it('B refuses a key revoked on A as soon as the DELETE has answered', async () => {
    const { key, id } = await issue();
    // Cached as valid on both instances (for 30 s without a bus).
    expect((await call(b.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
    expect((await call(a.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
    const started = performance.now();
    expect((await call(a.api.url, `/api/keys/${id}`, { key: admin, method: 'DELETE' })).status).toBe(204);
    const deleteMs = performance.now() - started;
    const refused = await call(b.api.url, '/api/orders?limit=1', { key });
    expect([refused.status, refused.body.code]).toEqual([401, 'invalid_api_key']);
    console.info(`revocation on PostgreSQL LISTEN/NOTIFY: DELETE answered in ${deleteMs.toFixed(1)} ms, B already refusing`);
  });

  it("B admits and refuses by a role as soon as A's role change has answered", async () => {
    const { key, id } = await issue();
    const roleCall = (method: string, path: string, body?: unknown) => call(a.api.url, path, body === undefined ? { key: admin, method } : { key: admin, method, body });
    expect((await roleCall('POST', '/api/roles', { name: 'bus-reports', permissions: ['reports:read'] })).status).toBe(201);
    const reports = () => call(b.api.url, '/api/reports/daily?date=2026-01-01', { key });
    // Cached on B without the role: refused.
    expect((await reports()).status).toBe(403);
    expect((await roleCall('PUT', `/api/keys/${id}/roles`, { roles: ['bus-reports'] })).status).toBe(200);
    expect((await reports()).status).toBe(200);
    expect((await roleCall('PATCH', '/api/roles/bus-reports', { permissions: [] })).status).toBe(200);
    expect((await reports()).status).toBe(403);
  });

  it('the bus down: an instance that loses its listening session drops its cached keys, and listens again', async () => {
    const first = await issue();
    expect((await call(b.api.url, '/api/orders?limit=1', { key: first.key })).status).toBe(200);
    const mark = b.logs.length;
    const db = new pg.Client({ connectionString: new URL(`/${database}`, serverUrl).href });
    await db.connect();
    try {
      await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [sessionName()]);
    } finally {
      await db.end();
    }
    await logged(b, 'revocation bus lost its listening connection', mark);
    // Revoked while B's bus is down: B's cache was dropped, so B asks the database.
    expect((await call(a.api.url, `/api/keys/${first.id}`, { key: admin, method: 'DELETE' })).status).toBe(204);
    expect((await call(b.api.url, '/api/orders?limit=1', { key: first.key })).status).toBe(401);
    // Both listen again on new sessions; revocations flow again.
    await logged(a, 'revocation bus listens again');
    await logged(b, 'revocation bus listens again', mark);
    const second = await issue();
    expect((await call(b.api.url, '/api/orders?limit=1', { key: second.key })).status).toBe(200);
    expect((await call(a.api.url, `/api/keys/${second.id}`, { key: admin, method: 'DELETE' })).status).toBe(204);
    expect((await call(b.api.url, '/api/orders?limit=1', { key: second.key })).status).toBe(401);
  });
});

describe.skipIf(serverUrl === undefined || !redisAvailable)('revocation during a Redis outage (DATABASE_URL and REDIS_URL, own redis-server killed)', () => {
  const database = `orders_api_busr_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let redis: ChildProcess;
  let a: TestApi;
  let b: TestApi;

  beforeAll(async () => {
    const databaseUrl = await createDatabase(database);
    const port = await freePort();
    redis = await startRedis(port);
    const common = { databaseUrl, redisUrl: `redis://127.0.0.1:${port}`, seedOrders: 20, cursorSecrets: [SECRET] };
    a = await startApi({ ...common, adapter: 'fastify' });
    b = await startApi({ ...common, adapter: 'fetch' });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((t) => t.stop({ remove: true })));
    if (redis) await killRedis(redis);
    await dropDatabase(database);
  });

  it('B refuses a key revoked on A while Redis is down: the PostgreSQL bus carried it', async () => {
    const admin = a.api.adminKey!;
    const issued = await call(a.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'outage', scopes: ['orders:read'] } });
    expect(issued.status, issued.text).toBe(201);
    const mark = b.logs.length;
    await killRedis(redis);
    // The Redis bus dropped B's cache when its subscriber went away; cache the key again after that.
    await logged(b, 'revocation bus lost its subscriber connection', mark);
    expect((await call(b.api.url, '/api/orders?limit=1', { key: issued.body.key })).status).toBe(200);
    expect((await call(b.api.url, '/api/orders?limit=1', { key: issued.body.key })).status).toBe(200);
    expect((await call(a.api.url, `/api/keys/${issued.body.id}`, { key: admin, method: 'DELETE' })).status).toBe(204);
    expect((await call(b.api.url, '/api/orders?limit=1', { key: issued.body.key })).status).toBe(401);
  });
});
