/**
 * Spent quota survives a Redis restart. A redis-server of this file's
 * own (no persistence) is killed by PID and restarted on the same port; PostgreSQL is the
 * real server of TEST_DATABASE_URL, the durable store. A key with a quota of 50 spent to
 * 0 must not come back with 50; at most what was spent since the last flush comes back.
 */
import type { ChildProcess } from 'node:child_process';
import { createRateLimiter, isKeysetError, type Quota } from '@keyset/core';
import { quotaSpend } from '@keyset/core/adapter';
import { createPostgresQuotaStore, migrate, type PostgresQuotaStore } from '@keyset/postgres';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, freePort, killRedis, ownRedisAvailable, startRedis, whenReady } from './own-redis-server.test-support.ts';
import { createRedisQuotaStore, type RedisQuotaStore } from './redis-quota-store.ts';

const available = ownRedisAvailable();
const url = await postgresUrl();
const schema = uniqueSchema('keyset_qdur');
const silent = { warn: () => undefined };
let n = 0;
const freshKey = (): string => `key_${process.pid}_${n++}`;

describe.skipIf(!available || url === undefined)('Redis quota store with a durable PostgreSQL store (own redis-server, killed and restarted)', () => {
  let port: number;
  let server: ChildProcess;
  let redis: Redis;
  let pool: pg.Pool;
  let durable: PostgresQuotaStore;
  const stores: RedisQuotaStore[] = [];

  /** A quota store as the example wires it; flushed by hand in these tests (the timer is slow). */
  function quotaStore(over: { durable?: PostgresQuotaStore | undefined; client?: Redis } = {}): RedisQuotaStore {
    const store = createRedisQuotaStore({
      redis: over.client ?? redis,
      timeoutMs: 5_000,
      flushIntervalMs: 3_600_000,
      logger: silent,
      ...('durable' in over ? (over.durable === undefined ? {} : { durable: over.durable }) : { durable }),
    });
    stores.push(store);
    return store;
  }

  async function restartRedis(): Promise<void> {
    await killRedis(server);
    server = await startRedis(port);
    await whenReady(redis);
    expect(await redis.dbsize()).toBe(0); // every count is gone
  }

  /** Spends `cost` credits `times` times through a limiter; returns how many were admitted and the last remaining. */
  async function spendMany(store: RedisQuotaStore, key: string, quota: Quota, times: number): Promise<{ admitted: number; remaining: number }> {
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 1 }, quotaStore: store, logger: silent, timeoutMs: 5_000 });
    let admitted = 0;
    let remaining = Number.NaN;
    for (let i = 0; i < times; i++) {
      try {
        const result = await limiter.check(key, undefined, { quota });
        admitted++;
        remaining = result.quota!.remaining;
      } catch (error) {
        if (!isKeysetError(error) || error.code !== 'quota_exhausted') throw error;
        remaining = error.extensions.quota_remaining as number;
      }
    }
    return { admitted, remaining };
  }

  beforeAll(async () => {
    port = await freePort();
    server = await startRedis(port);
    redis = await connectRedis(port);
    pool = new pg.Pool({ connectionString: url, max: 4 });
    await migrate(pool, { schema });
    durable = createPostgresQuotaStore({ client: pool, schema });
  });

  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    redis?.disconnect();
    if (server) await killRedis(server);
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  it('without a durable store (the finding): a restart hands the whole quota back', async () => {
    const store = quotaStore({ durable: undefined });
    const key = freshKey();
    const quota: Quota = { remaining: 50, refill: null, setAt: new Date() };
    expect(await spendMany(store, key, quota, 50)).toEqual({ admitted: 50, remaining: 0 });
    await restartRedis();
    expect(await spendMany(store, key, quota, 60)).toMatchObject({ admitted: 50 }); // 100 admitted for a quota of 50
  });

  it('quota 50 spent to 0 and flushed: after the restart it stays at 0, not 50', async () => {
    const store = quotaStore();
    const key = freshKey();
    const quota: Quota = { remaining: 50, refill: null, setAt: new Date() };
    expect(await spendMany(store, key, quota, 50)).toEqual({ admitted: 50, remaining: 0 });
    await store.flush();
    expect(await durable.load(key)).toEqual({ generation: quota.setAt.getTime(), period: 0, remaining: 0 });
    await restartRedis();
    expect(await spendMany(store, key, quota, 10)).toEqual({ admitted: 0, remaining: 0 });
  });

  it('a restart hands back at most what was spent since the last flush', async () => {
    const store = quotaStore();
    const key = freshKey();
    const quota: Quota = { remaining: 50, refill: null, setAt: new Date() };
    expect(await spendMany(store, key, quota, 35)).toEqual({ admitted: 35, remaining: 15 });
    await store.flush();
    expect(await spendMany(store, key, quota, 9)).toEqual({ admitted: 9, remaining: 6 }); // not flushed yet
    await restartRedis();
    // Rebuilt from the flushed state: 15 left, not 50 and not 6. The 9 unflushed credits are the bound.
    const after = await spendMany(store, key, quota, 30);
    expect(after).toEqual({ admitted: 15, remaining: 0 });
    expect(35 + 9 + after.admitted).toBeLessThanOrEqual(50 + 9);
  });

  it('refills and newer generations still apply to a rebuilt count', async () => {
    const store = quotaStore();
    const key = freshKey();
    const setAt = Date.UTC(2026, 0, 10);
    const quota: Quota = { remaining: 5, refill: { amount: 7, interval: 'daily' }, setAt: new Date(setAt) };
    const at = (ms: number, cost: number) => quotaSpend(key, quota, cost, ms);
    expect(await store.spend(at(setAt + 1_000, 4))).toEqual({ allowed: true, remaining: 1 });
    await store.flush();
    await restartRedis();
    expect(await store.spend(at(setAt + 2_000, 2))).toEqual({ allowed: false, remaining: 1 });
    // The next UTC day refills the rebuilt count to 7.
    expect(await store.spend(at(setAt + 86_400_000, 2))).toEqual({ allowed: true, remaining: 5 });
    await store.flush();
    await restartRedis();
    // An administrator sets a new quota (a newer setAt): the durable state of the old one is not used.
    const reset: Quota = { remaining: 3, refill: null, setAt: new Date(setAt + 90_000_000) };
    expect(await store.spend(quotaSpend(key, reset, 1, setAt + 90_000_001))).toEqual({ allowed: true, remaining: 2 });
  });

  it("a key's quota and its owner's (spendAll, in the owner's hash tag) are both rebuilt after a restart, and both raised after a lagging failover", async () => {
    const store = quotaStore();
    const key = freshKey();
    const owner = `owner:cus_${freshKey()}`;
    const setAt = Date.now() - 1_000;
    const both = (keyCost: number, ownerCost = keyCost) => [
      { ...quotaSpend(key, { remaining: 10, refill: null, setAt: new Date(setAt) }, keyCost, setAt + 1), partition: owner },
      quotaSpend(owner, { remaining: 6, refill: null, setAt: new Date(setAt) }, ownerCost, setAt + 1),
    ];
    expect(await store.spendAll(both(4))).toEqual([
      { allowed: true, remaining: 6 },
      { allowed: true, remaining: 2 },
    ]);
    await store.flush();
    await restartRedis();
    // Neither count starts again from its credits: the owner's 2 and the key's 6 come back.
    expect(await store.spendAll(both(3))).toEqual([
      { allowed: true, remaining: 6 },
      { allowed: false, remaining: 2 },
    ]);
    expect(await store.spendAll(both(1))).toEqual([
      { allowed: true, remaining: 5 },
      { allowed: true, remaining: 1 },
    ]);
    await store.flush();
    // A replica that missed the spends: both hashes behind; the next flush raises both.
    await redis.hset(store.keyOf(key, owner), 'r', '9');
    await redis.hset(store.keyOf(owner), 'r', '6');
    await store.spendAll(both(0));
    await store.flush();
    expect(await redis.hget(store.keyOf(key, owner), 'r')).toBe('5');
    expect(await redis.hget(store.keyOf(owner), 'r')).toBe('1');
    expect(store.keyOf(key, owner)).toBe(`keyset:quota:{${owner}}:${key}`);
  });

  it('a hash lost between the two script calls of a rebuild (a failover at that instant) is rebuilt from the durable state too, not from the full quota', async () => {
    /** The Redis key to delete while the store reads the durable state, between its two script calls. */
    let loseWhileLoading: string | undefined;
    const racing = {
      async load(key: string) {
        const lose = loseWhileLoading;
        loseWhileLoading = undefined;
        if (lose !== undefined) await redis.del(lose);
        return durable.load(key);
      },
      save: (entries: Parameters<PostgresQuotaStore['save']>[0]) => durable.save(entries),
    };
    const store = createRedisQuotaStore({ redis, durable: racing, timeoutMs: 5_000, flushIntervalMs: 3_600_000, logger: silent });
    stores.push(store);
    const key = freshKey();
    const owner = `owner:cus_${freshKey()}`;
    const setAt = Date.now() - 1_000;
    const both = (cost: number) => [
      { ...quotaSpend(key, { remaining: 10, refill: null, setAt: new Date(setAt) }, cost, setAt + 1), partition: owner },
      quotaSpend(owner, { remaining: 6, refill: null, setAt: new Date(setAt) }, cost, setAt + 1),
    ];
    expect(await store.spendAll(both(4))).toEqual([
      { allowed: true, remaining: 6 },
      { allowed: true, remaining: 2 },
    ]);
    await store.flush();
    // The key's count is lost: the first script call answers "missing" and the store reads
    // the durable state; while it does, the owner's count is lost too.
    await redis.del(store.keyOf(key, owner));
    loseWhileLoading = store.keyOf(owner);
    expect(await store.spendAll(both(1))).toEqual([
      { allowed: true, remaining: 5 },
      { allowed: true, remaining: 1 },
    ]);
    expect(loseWhileLoading).toBeUndefined(); // the owner's hash was deleted between the calls
    expect(await redis.hget(store.keyOf(owner), 'r')).toBe('1'); // not 5: 6 credits again
  });

  it('Redis behind the durable state (a failover to a lagging replica) is raised at the next flush, never lowered', async () => {
    const store = quotaStore();
    const key = freshKey();
    const quota: Quota = { remaining: 50, refill: null, setAt: new Date() };
    await spendMany(store, key, quota, 40);
    await store.flush();
    // The replica had only seen 10 of the 40 spends.
    await redis.hset(store.keyOf(key), 'r', '40');
    expect(await spendMany(store, key, quota, 1)).toEqual({ admitted: 1, remaining: 39 });
    await store.flush();
    expect(await redis.hget(store.keyOf(key), 'r')).toBe('10');
    expect(await durable.load(key)).toMatchObject({ remaining: 10 });
    expect(await spendMany(store, key, quota, 20)).toEqual({ admitted: 10, remaining: 0 });
  });

  it('two instances spending one quota concurrently and flushing in any order: the durable count ends where Redis is', async () => {
    const other = await connectRedis(port);
    try {
      const [a, b] = [quotaStore(), quotaStore({ client: other })];
      const key = freshKey();
      const quota: Quota = { remaining: 200, refill: null, setAt: new Date() };
      const results = await Promise.all([spendMany(a!, key, quota, 60), spendMany(b!, key, quota, 60), a!.flush(), spendMany(a!, key, quota, 30)]);
      await Promise.all([b!.flush(), a!.flush()]);
      const inRedis = Number(await redis.hget(a!.keyOf(key), 'r'));
      expect(inRedis).toBe(200 - 150);
      expect(results[0]!.admitted + results[1]!.admitted + results[3]!.admitted).toBe(150);
      expect(await durable.load(key)).toMatchObject({ remaining: inRedis });
      // An instance flushing an older state afterwards does not move it back.
      await durable.save([{ key, state: { generation: quota.setAt.getTime(), period: 0, remaining: 120 } }]);
      expect(await durable.load(key)).toMatchObject({ remaining: inRedis });
    } finally {
      other.disconnect();
    }
  });

  it('close() flushes what is left; a failing durable store keeps it for the next flush', async () => {
    let failing = true;
    const flaky = {
      load: (key: string) => durable.load(key),
      save: (entries: Parameters<PostgresQuotaStore['save']>[0]) => (failing ? Promise.reject(new Error('connection refused')) : durable.save(entries)),
    };
    const store = createRedisQuotaStore({ redis, durable: flaky, flushIntervalMs: 3_600_000, logger: silent });
    stores.push(store);
    const key = freshKey();
    const quota: Quota = { remaining: 9, refill: null, setAt: new Date() };
    await spendMany(store, key, quota, 4);
    await expect(store.flush()).rejects.toThrow('connection refused');
    await spendMany(store, key, quota, 1);
    failing = false;
    await store.close();
    expect(await durable.load(key)).toMatchObject({ remaining: 4 });
  });

  it('Redis restarted and the durable store down: a spend of a lost count is refused (503), never started from the full quota', async () => {
    const down = { load: () => Promise.reject(new Error('connection refused')), save: () => Promise.reject(new Error('connection refused')) };
    const store = createRedisQuotaStore({ redis, durable: down, flushIntervalMs: 3_600_000, logger: silent });
    stores.push(store);
    const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 1 }, quotaStore: store, logger: silent, timeoutMs: 5_000 });
    const error = await limiter.check(freshKey(), undefined, { quota: { remaining: 50, refill: null, setAt: new Date() } }).catch((e: unknown) => e);
    expect(isKeysetError(error) && error.code).toBe('unavailable');
  });
});
