/**
 * Redis round trips per request, counted by Redis itself (`INFO commandstats`), with every
 * feature on: `REDIS_URL`, `IN_FLIGHT_MAX`, `OWNER_IN_FLIGHT_MAX`, a key with an owner, a
 * key quota and an owner quota, an owner rate limit. One instance of the example per
 * adapter (Hono, Express, Fastify, Fetch) on one PostgreSQL database and a redis-server of
 * the test's own on a free port, so no other test's traffic is counted.
 *
 * - an admitted request: 2 calls (one script decides the leases, every rate limit and
 *   both quotas; one gives both leases back);
 * - a key over its rate limit: 1 call for the first refusal, then 0 until its retry time;
 * - a key whose quota is exhausted: 1 call for the first refusal, then 0 until its refill
 *   (or an administrator changes the key: then 1 again, and the new quota admits).
 *
 * Skips without PostgreSQL or without `redis-server` on PATH.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort, killRedis, ownRedisAvailable, postgresUrl, startRedis } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, createDatabase, dropDatabase, startApi, type TestApi } from './helpers.ts';

const pgUrl = await postgresUrl();
/** The commands keyset's scripts run inside Redis: counted by `commandstats`, never sent by a client. */
const IN_SCRIPTS = new Set(['time', 'get', 'set', 'hmget', 'hset', 'zadd', 'zrem', 'zrange', 'zcard', 'zremrangebyscore', 'zscore', 'pexpireat']);
const available = ownRedisAvailable();

describe.skipIf(pgUrl === undefined || !available)('Redis calls per request, every feature on, on each adapter', () => {
  const database = `orders_api_roundtrips_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let server: ChildProcess;
  let redis: Redis;
  let databaseUrl: string;
  const instances: TestApi[] = [];
  let admin: string;

  /**
   * Every command clients sent so far: `commandstats` also counts the commands a script
   * runs (`GET`, `SET`, `ZADD`, …), so those are left out, and `INFO` itself.
   */
  const commands = async (): Promise<number> => {
    const info = await redis.info('commandstats');
    let total = 0;
    for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (!IN_SCRIPTS.has(name!) && name !== 'info') total += Number(calls);
    return total;
  };

  /**
   * The count once Redis has seen no command for 1.1 s: longer than the example's quota
   * flush (every second), whose merge may raise a count in Redis once after an
   * administrator read it (`GET`/`POST` answers show the live count), and than the lease's
   * give-back, which runs after the response.
   */
  const settled = async (): Promise<number> => {
    let last = await commands();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const now = await commands();
      if (now === last) return now;
      last = now;
    }
  };

  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await call(instances[0]!.api.url, path, { key: admin, method: 'POST', body });
    expect(res.status, res.text).toBe(201);
    return res.body as { key: string; id: string };
  };

  /** A key with an owner; both with a quota and a rate limit. */
  const ownedKey = async (tag: string, key: { quota: number; limit: number }) => {
    const ownerId = `cus_rt_${tag}_${Math.random().toString(36).slice(2, 8)}`;
    await post('/api/owners', { id: ownerId, quota: { remaining: 1000 }, rateLimits: [{ name: 'hour', limit: 1000, windowSeconds: 3600 }] });
    const issued = await post('/api/keys', {
      name: `rt-${tag}`,
      scopes: ['orders:read'],
      ownerId,
      quota: { remaining: key.quota },
      rateLimit: { limit: key.limit, windowSeconds: 3600 },
    });
    return { ...issued, ownerId };
  };

  beforeAll(async () => {
    const port = await freePort();
    server = await startRedis(port);
    redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    databaseUrl = await createDatabase(pgUrl!, database);
    const common = {
      databaseUrl,
      redisUrl: `redis://127.0.0.1:${port}`,
      seedOrders: 20,
      cursorSecrets: ['x'.repeat(32)],
      inFlightMax: 5,
      ownerInFlightMax: 10,
    } as const;
    // One after the other: the first creates the schema and the admin key.
    for (const adapter of ADAPTERS) instances.push(await startApi({ ...common, adapter }));
    admin = instances[0]!.api.adminKey!;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((t) => t.stop({ remove: true })));
    redis?.disconnect();
    if (server !== undefined) await killRedis(server);
    if (pgUrl !== undefined) await dropDatabase(pgUrl, database);
  });

  it.each(ADAPTERS.map((adapter, i) => [adapter, i] as const))('%s: 2 calls per admitted request', async (_adapter, i) => {
    const t = instances[i]!;
    const { key, ownerId } = await ownedKey(`ok${i}`, { quota: 100, limit: 100 });
    // The first request caches the key (PostgreSQL, not Redis) and warms nothing in Redis.
    expect((await call(t.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
    const before = await settled();
    for (let n = 0; n < 5; n++) {
      const res = await call(t.api.url, '/api/orders?limit=1', { key });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('ratelimit')).toMatch(/r=\d+/);
    }
    expect((await settled()) - before).toBe(2 * 5);
    // Both leases were given back, and both quotas spent once per request.
    expect(await redis.zcard(`keyset:inflight:{owner:${ownerId}}`)).toBe(0);
    expect(await redis.hget(`keyset:quota:{owner:${ownerId}}`, 'r')).toBe(String(1000 - 6));
  });

  it.each(ADAPTERS.map((adapter, i) => [adapter, i] as const))('%s: 0 calls for a key refused by its rate limit until its retry time', async (_adapter, i) => {
    const t = instances[i]!;
    const { key, ownerId } = await ownedKey(`rate${i}`, { quota: 100, limit: 2 });
    for (let n = 0; n < 2; n++) expect((await call(t.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
    const first = await call(t.api.url, '/api/orders?limit=1', { key });
    expect(first.status).toBe(429);
    expect(first.body).toMatchObject({ code: 'rate_limited' });
    const before = await settled();
    for (let n = 0; n < 20; n++) {
      const again = await call(t.api.url, '/api/orders?limit=1', { key });
      expect(again.status).toBe(429);
      expect(again.body).toMatchObject({ code: 'rate_limited' });
      // The answer Redis gave: the same policy, no request left, a retry no later than Redis said.
      expect(again.headers.get('ratelimit')).toMatch(/r=0/);
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(again.headers.get('retry-after'))).toBeLessThanOrEqual(Number(first.headers.get('retry-after')));
    }
    expect((await settled()) - before).toBe(0);
    // Nothing of the owner was spent by the refusals.
    expect(await redis.hget(`keyset:quota:{owner:${ownerId}}`, 'r')).toBe(String(1000 - 2));
  });

  it.each(ADAPTERS.map((adapter, i) => [adapter, i] as const))('%s: 0 calls for a key whose quota is exhausted, until an administrator changes it', async (_adapter, i) => {
    const t = instances[i]!;
    const { key, id } = await ownedKey(`quota${i}`, { quota: 2, limit: 100 });
    for (let n = 0; n < 2; n++) expect((await call(t.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
    const first = await call(t.api.url, '/api/orders?limit=1', { key });
    expect(first.status).toBe(429);
    expect(first.body).toMatchObject({ code: 'quota_exhausted', quota: 'key', quota_remaining: 0 });
    const before = await settled();
    for (let n = 0; n < 20; n++) {
      const again = await call(t.api.url, '/api/orders?limit=1', { key });
      expect(again.status).toBe(429);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('ratelimit-policy')).toBe(first.headers.get('ratelimit-policy'));
    }
    expect((await settled()) - before).toBe(0);
    // A new quota, set through another instance: every instance asks Redis again, and admits.
    const other = instances[(i + 1) % instances.length]!;
    const patched = await call(other.api.url, `/api/keys/${id}/limits`, { key: admin, method: 'PATCH', body: { quota: { remaining: 1 } } });
    expect(patched.status, patched.text).toBe(200);
    expect((await call(t.api.url, '/api/orders?limit=1', { key })).status).toBe(200);
  });
});
