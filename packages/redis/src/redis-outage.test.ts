/**
 * Outages against a redis-server this file starts and kills itself: NOSCRIPT recovery,
 * a stalled server (timeout), and a server killed mid-load under each onStoreError mode,
 * then restarted on the same port.
 */
import type { ChildProcess } from 'node:child_process';
import { createRateLimiter, isKeysetError, type RateLimitLogger, type RateLimitPolicy } from '@keyset/core';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRedisConcurrencyStore, createRedisRateLimitStore, type RedisScriptClient } from './index.ts';
import { connectRedis as client, freePort, killRedis as kill, ownRedisAvailable, startRedis } from './own-redis-server.test-support.ts';

const available = ownRedisAvailable();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const silent: RateLimitLogger = { warn: () => undefined };

describe.skipIf(!available)('Redis store outages (own redis-server)', () => {
  let port: number;
  let server: ChildProcess;
  let redis: Redis;
  let unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  beforeAll(async () => {
    port = await freePort();
    server = await startRedis(port);
    redis = await client(port);
  });

  afterAll(async () => {
    redis?.disconnect();
    if (server) await kill(server);
  });

  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(async () => {
    await sleep(100); // let late replies and retries settle inside the test's window
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('recovers from NOSCRIPT (SCRIPT FLUSH) with one EVAL, then uses EVALSHA again', async () => {
    const calls: string[] = [];
    const spy: RedisScriptClient = {
      evalsha: (...args) => {
        calls.push('evalsha');
        return redis.evalsha(...args);
      },
      eval: (...args) => {
        calls.push('eval');
        return redis.eval(...args);
      },
    };
    const store = createRedisRateLimitStore({ redis: spy });
    const policy: RateLimitPolicy = { limit: 3, windowSeconds: 60 };
    expect((await store.decide([{ key: 'noscript', policy }]))[0]!.remaining).toBe(2);
    await redis.script('FLUSH');
    calls.length = 0;
    expect((await store.decide([{ key: 'noscript', policy }]))[0]!.remaining).toBe(1);
    expect((await store.decide([{ key: 'noscript', policy }]))[0]!.remaining).toBe(0);
    expect(calls).toEqual(['evalsha', 'eval', 'evalsha']);
  });

  // SCRIPT FLUSH runs on this file's own server: on the shared one it would send other
  // files' scripts through EVAL too, and their call counts with them.
  it('the concurrency store reloads its scripts after SCRIPT FLUSH', async () => {
    const store = createRedisConcurrencyStore({ redis, prefix: 'keyset:test:outage:inflight:' });
    await store.acquire('flush', 'a', 2, 60_000);
    await redis.script('FLUSH');
    expect((await store.acquire('flush', 'b', 2, 60_000)).acquired).toBe(true);
    await redis.script('FLUSH');
    await store.release('flush', 'a');
    expect((await store.acquire('flush', 'c', 2, 60_000)).acquired).toBe(true);
    expect((await store.acquire('flush', 'd', 2, 60_000)).acquired).toBe(false);
  });

  it('rejects a decision a stalled server does not answer within timeoutMs, without a late unhandled rejection', async () => {
    const store = createRedisRateLimitStore({ redis, timeoutMs: 50 });
    const admin = await client(port);
    await admin.client('PAUSE', 1500, 'ALL');
    // The admin connection is paused too: its PING is answered when the pause ends. The
    // decision must give up on its own before that, an order of events, not a time budget.
    const pauseOver = admin.ping().then(() => 'pause over' as const);
    const outcome = await Promise.race([store.decide([{ key: 'stalled', policy: { limit: 5, windowSeconds: 60 } }]).catch((e: unknown) => e), pauseOver]);
    expect((outcome as Error).name).toBe('TimeoutError');
    await pauseOver; // the late reply to the timed-out decision is dropped quietly
    expect((await store.decide([{ key: 'stalled', policy: { limit: 5, windowSeconds: 60 } }]))[0]).toMatchObject({
      allowed: true,
      remaining: 3, // the timed-out decision did run in Redis after the pause
    });
    admin.disconnect();
  });

  type Outcome = 'store' | 'local' | 'open' | 'unavailable' | 'rate_limited' | 'other';

  for (const mode of ['open', 'closed', 'local'] as const) {
    it(`kill mid-load, onStoreError '${mode}': ${mode === 'closed' ? '503' : mode} during the outage, back to Redis after restart`, async () => {
      // Long enough that a loaded machine (two cores shared by three test files) does not
      // time out a check before the kill; the outage is still ten timeouts long at least.
      const storeTimeout = 100;
      const limiter = createRateLimiter({
        store: createRedisRateLimitStore({ redis, timeoutMs: storeTimeout, prefix: `keyset:outage:${mode}:` }),
        defaultPolicy: { limit: 1_000_000, windowSeconds: 60 },
        onStoreError: mode,
        retryIntervalMs: 100,
        logger: process.env.DEBUG_OUTAGE ? { warn: (d, m) => console.info(Math.round(performance.now()), m, d) } : silent,
      });
      const log: { at: number; ms: number; outcome: Outcome }[] = [];
      let stop = false;
      const worker = async (id: number): Promise<void> => {
        while (!stop) {
          const started = performance.now();
          let outcome: Outcome;
          try {
            const { decision } = await limiter.check(`worker${id}`);
            outcome = decision.degraded ?? 'store';
          } catch (error) {
            outcome = isKeysetError(error) && (error.code === 'unavailable' || error.code === 'rate_limited') ? error.code : 'other';
            if (outcome === 'unavailable') expect((error as { status: number }).status).toBe(503);
          }
          log.push({ at: started, ms: performance.now() - started, outcome });
          await sleep(1); // a fallback answers without I/O: yield to timers (and keep the log small)
        }
      };
      const workers = Array.from({ length: 8 }, (_, i) => worker(i));

      await sleep(300);
      const killedAt = performance.now();
      await kill(server);
      await sleep(1000);
      let smallKeyOutcomes: Outcome[] = [];
      if (mode === 'local') {
        // The in-process fallback is exact too: 5 admitted, then 429.
        for (let i = 0; i < 8; i++) {
          smallKeyOutcomes.push(
            await limiter.check('small', { limit: 5, windowSeconds: 60 }).then(
              ({ decision }) => decision.degraded ?? 'store',
              (error: unknown) => (isKeysetError(error) ? (error.code as Outcome) : 'other'),
            ),
          );
        }
      }
      const restartedAt = performance.now();
      if (process.env.DEBUG_OUTAGE) console.info('restart at', Math.round(restartedAt), 'killed at', Math.round(killedAt));
      server = await startRedis(port);
      const deadline = performance.now() + 5000;
      while (performance.now() < deadline && !log.some((e) => e.at > restartedAt && e.outcome === 'store')) await sleep(20);
      const recoveredAt = log.find((e) => e.at > restartedAt && e.outcome === 'store')?.at;
      await sleep(400);
      stop = true;
      await Promise.all(workers);

      const before = log.filter((e) => e.at + e.ms < killedAt);
      const during = log.filter((e) => e.at > killedAt + storeTimeout && e.at < restartedAt);
      const after = log.filter((e) => recoveredAt !== undefined && e.at > recoveredAt + 100);
      const slowest = log.reduce((max, e) => Math.max(max, e.ms), 0);
      const count = (entries: typeof log): Record<string, number> =>
        entries.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e.outcome]: (acc[e.outcome] ?? 0) + 1 }), {});
      console.info(
        `onStoreError '${mode}': before ${JSON.stringify(count(before))}, during ${JSON.stringify(count(during))}, ` +
          `after ${JSON.stringify(count(after))}; recovered ${recoveredAt === undefined ? 'never' : `${Math.round(recoveredAt - restartedAt)} ms after restart`}; ` +
          `slowest check ${Math.round(slowest)} ms`,
      );

      expect(before.length).toBeGreaterThan(20);
      expect(new Set(before.map((e) => e.outcome))).toEqual(new Set(['store']));
      const expected: Outcome = mode === 'closed' ? 'unavailable' : mode;
      expect(during.length).toBeGreaterThan(100);
      expect(new Set(during.map((e) => e.outcome))).toEqual(new Set([expected]));
      expect(log.some((e) => e.outcome === 'rate_limited' || e.outcome === 'other')).toBe(false);
      // No call hangs until Redis is back: every check that started well before the
      // restart (half a second: five store timeouts) ended before it.
      const hung = log.filter((e) => e.at > killedAt && e.at < restartedAt - 500 && e.at + e.ms >= restartedAt);
      expect(hung).toEqual([]);
      expect(recoveredAt).toBeDefined();
      expect(after.length).toBeGreaterThan(10);
      expect(new Set(after.map((e) => e.outcome))).toEqual(new Set(['store']));
      expect(limiter.storeState).toBe('up');
      if (mode === 'local') {
        expect(smallKeyOutcomes).toEqual(['local', 'local', 'local', 'local', 'local', 'rate_limited', 'rate_limited', 'rate_limited']);
      }
    });
  }
});
