import { ConfigError, createRateLimiter, isKeysetError, type RateLimitPolicy } from '@keyset/core';
import { deleteKeys, redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore, type RedisScriptClient } from './index.ts';

const url = await redisUrl();
const prefix = `keyset:test:rl:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;

async function connect(address: string): Promise<Redis> {
  const redis = new Redis(address, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

describe.skipIf(url === undefined)('createRedisRateLimitStore (real Redis)', () => {
  let a: Redis;
  let b: Redis;
  let n = 0;
  const freshKey = (): string => `id${n++}`;

  beforeAll(async () => {
    a = await connect(url as string);
    b = await connect(url as string);
  });

  afterAll(async () => {
    if (a === undefined) return;
    await deleteKeys(a, prefix);
    a.disconnect();
    b.disconnect();
  });

  it('admits exactly `limit` of a sequential burst of limit + 5 (well within one emission interval)', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const policy: RateLimitPolicy = { limit: 10, windowSeconds: 60 }; // T = 6 s
    const key = freshKey();
    const started = performance.now();
    const decisions = [];
    for (let i = 0; i < 15; i++) decisions.push((await store.decide([{ key, policy }]))[0]!);
    expect(performance.now() - started).toBeLessThan(6000);
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), ...Array(5).fill(false)]);
    expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);
    expect(decisions[0]).toMatchObject({ resetSeconds: 6, retryAfterSeconds: 0 });
    // Exact values: the burst took far less than a second of the 6 s interval.
    expect(decisions[10]).toMatchObject({ allowed: false, resetSeconds: 60, retryAfterSeconds: 6 });
  });

  it('admits exactly `limit` of 40 concurrent requests from one client', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const policy: RateLimitPolicy = { limit: 25, windowSeconds: 60 };
    const key = freshKey();
    const results = await Promise.all(Array.from({ length: 40 }, () => store.decide([{ key, policy }])));
    expect(results.filter(([d]) => d!.allowed)).toHaveLength(25);
    expect(results.map(([d]) => d!.remaining).sort((x, y) => x - y).slice(15)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });

  it('two clients bursting concurrently against one Redis admit the limit in total, not twice', async () => {
    const storeA = createRedisRateLimitStore({ redis: a, prefix });
    const storeB = createRedisRateLimitStore({ redis: b, prefix });
    const policy: RateLimitPolicy = { limit: 50, windowSeconds: 60 };
    const key = freshKey();
    const burst = (store: typeof storeA): Promise<boolean[]> =>
      Promise.all(Array.from({ length: 100 }, async () => (await store.decide([{ key, policy }]))[0]!.allowed));
    const [fromA, fromB] = await Promise.all([burst(storeA), burst(storeB)]);
    const admitted = [...fromA!, ...fromB!].filter(Boolean).length;
    expect(admitted).toBe(50);
    expect(fromA!.length + fromB!.length).toBe(200);
  });

  it('refills at the policy rate, measured on Redis TIME', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const policy: RateLimitPolicy = { limit: 10, windowSeconds: 1 }; // T = 100 ms
    const key = freshKey();
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) expect((await store.decide([{ key, policy }]))[0]!.allowed).toBe(true);
    const t1 = performance.now();
    const eleventh = (await store.decide([{ key, policy }]))[0]!.allowed;
    // Refused, unless this (busy) machine took a whole emission interval over the burst.
    if (performance.now() - t0 < 100) expect(eleventh).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const t2 = performance.now();
    let admitted = 0;
    while ((await store.decide([{ key, policy }]))[0]!.allowed) admitted++;
    const t3 = performance.now();
    // The TAT after the burst is (first request) + 1 s; each 100 ms since frees one.
    expect(admitted).toBeGreaterThanOrEqual(Math.floor((t2 - t1) / 100));
    expect(admitted).toBeLessThanOrEqual(Math.floor((t3 - t0) / 100));
  });

  it('decides several policies of one identity all-or-nothing in one script call', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const short: RateLimitPolicy = { limit: 3, windowSeconds: 60, name: 'short' };
    const long: RateLimitPolicy = { limit: 5, windowSeconds: 3600, name: 'long' };
    const key = freshKey();
    const both = [
      { key, policy: short },
      { key, policy: long },
    ];
    for (let i = 0; i < 3; i++) expect((await store.decide(both)).map((d) => d.allowed)).toEqual([true, true]);
    const refused = await store.decide(both);
    expect(refused.map((d) => d.allowed)).toEqual([false, false]);
    expect(refused[0]!.retryAfterSeconds).toBe(20);
    expect(refused[1]!.retryAfterSeconds).toBe(0);
    // The refusal consumed nothing of the long policy: 5 − 3 = 2 left.
    expect((await store.decide([{ key, policy: long }], 0))[0]).toMatchObject({ allowed: true, remaining: 2 });
    expect(await a.get(store.keyOf(key, 'long'))).not.toBeNull();
  });

  it('stores one TAT per key, hash-tagged, expiring exactly when the TAT passes', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const key = freshKey();
    await store.decide([{ key, policy: { limit: 10, windowSeconds: 60 } }], 3);
    const redisKey = store.keyOf(key);
    expect(redisKey).toBe(`${prefix}{${key}}:default`);
    const [[, tat], [, pttl], [, time]] = (await a.multi().get(redisKey).pttl(redisKey).time().exec()) as unknown as [
      [null, string],
      [null, number],
      [null, [string, string]],
    ];
    const nowMicros = Number(time[0]) * 1e6 + Number(time[1]);
    expect(tat).toMatch(/^\d+$/);
    const ahead = Number(tat) - nowMicros; // 3 × 6 s
    expect(ahead).toBeGreaterThan(17_000_000);
    expect(ahead).toBeLessThanOrEqual(18_000_000);
    expect(pttl).toBeGreaterThan(17_000);
    expect(pttl).toBeLessThanOrEqual(18_000);
    // A peek writes nothing.
    const idle = freshKey();
    await store.decide([{ key: idle, policy: { limit: 10, windowSeconds: 60 } }], 0);
    expect(await a.exists(store.keyOf(idle))).toBe(0);
  });

  it('refuses a decision over several identities, and invalid input, with a ConfigError', async () => {
    const store = createRedisRateLimitStore({ redis: a, prefix });
    const policy: RateLimitPolicy = { limit: 1, windowSeconds: 1 };
    await expect(store.decide([{ key: 'x', policy }, { key: 'y', policy: { ...policy, name: 'other' } }])).rejects.toBeInstanceOf(ConfigError);
    await expect(store.decide([{ key: 'x', policy: { limit: 0, windowSeconds: 1 } }])).rejects.toBeInstanceOf(ConfigError);
    await expect(store.decide([{ key: 'x', policy }], 2)).rejects.toBeInstanceOf(ConfigError);
    expect(() => createRedisRateLimitStore({ redis: a, prefix: 'bad{' })).toThrow(ConfigError);
    expect(() => createRedisRateLimitStore({ redis: {} as never })).toThrow(ConfigError);
    expect(() => createRedisRateLimitStore({ redis: a, timeoutMs: 0 })).toThrow(ConfigError);
  });

  it('serves createRateLimiter: 429 with Retry-After from Redis state', async () => {
    const limiter = createRateLimiter({
      store: createRedisRateLimitStore({ redis: a, prefix }),
      defaultPolicy: { limit: 2, windowSeconds: 10 },
      onStoreError: 'closed',
    });
    const key = freshKey();
    expect((await limiter.check(key)).headers).toEqual({ 'ratelimit-policy': '"default";q=2;w=10', ratelimit: '"default";r=1;t=5' });
    await limiter.check(key);
    const error = await limiter.check(key).catch((e: unknown) => e);
    expect(isKeysetError(error) && error.code).toBe('rate_limited');
    expect(isKeysetError(error) && error.headers['retry-after']).toBe('5');
  });

  it('answers each decision with exactly one EVALSHA', async () => {
    const calls: string[] = [];
    const spy: RedisScriptClient = {
      evalsha: (...args) => {
        calls.push('evalsha');
        return a.evalsha(...args);
      },
      eval: (...args) => {
        calls.push('eval');
        return a.eval(...args);
      },
    };
    const store = createRedisRateLimitStore({ redis: spy, prefix });
    const key = freshKey();
    await store.decide([{ key, policy: { limit: 5, windowSeconds: 60 } }]); // may need EVAL once if never loaded
    calls.length = 0;
    for (let i = 0; i < 20; i++) {
      await store.decide([
        { key, policy: { limit: 5, windowSeconds: 60 } },
        { key, policy: { limit: 50, windowSeconds: 3600, name: 'hour' } },
      ]);
    }
    expect(calls).toEqual(Array(20).fill('evalsha'));
  });
});
