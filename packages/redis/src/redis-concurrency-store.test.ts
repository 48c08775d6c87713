/**
 * In-flight leases on a real Redis: the lease store contract (any interleaving of acquire,
 * release and crash from two clients, checked against Redis TIME read around each
 * acquire), a burst from two clients at once, a crashed holder admitted again at its leases'
 * expiry and not before, and the set expiring with its last lease.
 */
import fc from 'fast-check';
import { deleteKeys, leaseCommand, redisUrl, runLeaseCommands } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConcurrencyStore } from './redis-concurrency-store.ts';

let one: Redis;
let two: Redis;
const run = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const prefix = `keyset:test:inflight:${run}:`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Redis `TIME` in ms, as the lease script reads it. */
const redisNow = async (): Promise<number> => {
  const [seconds, micros] = await one.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
};

const url = await redisUrl();

beforeAll(async () => {
  if (url === undefined) return;
  one = new Redis(url, { maxRetriesPerRequest: 1 });
  two = new Redis(url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  if (url === undefined) return;
  await deleteKeys(one, prefix);
  one.disconnect();
  two.disconnect();
});

describe.skipIf(url === undefined)('Redis concurrency store', () => {
  it('two clients: never more than max live leases, never one counted past its expiry (Redis TIME)', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(leaseCommand, { maxLength: 40 }), fc.integer({ min: 1, max: 3 }), async (commands, max) => {
        round += 1;
        const clients = [createRedisConcurrencyStore({ redis: one, prefix }), createRedisConcurrencyStore({ redis: two, prefix })] as const;
        await runLeaseCommands(clients, commands, { max, ttlMs: 120, namespace: `p${round}`, wait: sleep, now: redisNow });
      }),
      { numRuns: 25 },
    );
  });

  it('a burst of 30 from two clients at once takes exactly max leases', async () => {
    const stores = [createRedisConcurrencyStore({ redis: one, prefix }), createRedisConcurrencyStore({ redis: two, prefix })];
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => (stores[i % 2] as (typeof stores)[0]).acquire('burst', `l${i}`, 5, 60_000)));
    expect(answers.filter((a) => a.acquired)).toHaveLength(5);
    expect((await stores[0]!.acquire('burst', 'late', 5, 60_000)).acquired).toBe(false);
  });

  it('a holder whose instance died is admitted again at its leases expiry, not before', async () => {
    const dead = createRedisConcurrencyStore({ redis: one, prefix });
    const alive = createRedisConcurrencyStore({ redis: two, prefix });
    const takenFrom = await redisNow();
    const taken = await Promise.all([dead.acquire('crash', 'a', 2, 400), dead.acquire('crash', 'b', 2, 400)]);
    const takenTo = await redisNow();
    expect(taken.every((t) => t.acquired)).toBe(true);
    // The instance is gone: nothing is released. Ask until admitted: never before the
    // first lease can have expired (Redis time), never refused after both surely have.
    for (;;) {
      const before = await redisNow();
      const answer = await alive.acquire('crash', `retry${Date.now()}`, 2, 400);
      const after = await redisNow();
      if (answer.acquired) {
        expect(after).toBeGreaterThanOrEqual(takenFrom + 400);
        break;
      }
      expect(before).toBeLessThan(takenTo + 400);
      await sleep(20);
    }
  });

  it('releases free a slot at once; the set expires with its last lease', async () => {
    const store = createRedisConcurrencyStore({ redis: one, prefix });
    await store.acquire('tidy', 'x', 1, 60_000);
    expect((await store.acquire('tidy', 'y', 1, 60_000)).acquired).toBe(false);
    await store.release('tidy', 'x');
    await store.release('tidy', 'x');
    const again = await store.acquire('tidy', 'z', 1, 300);
    expect(again.acquired).toBe(true);
    const ttl = await one.pttl(store.keyOf('tidy'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
  });

  it('renews a live lease by Redis time; an expired or released one stays gone', async () => {
    const store = createRedisConcurrencyStore({ redis: one, prefix });
    expect((await store.acquire('renew', 'a', 1, 300)).acquired).toBe(true);
    // Renewed every 100 ms for three times its time to live: still holding the slot.
    for (let i = 0; i < 9; i++) {
      await sleep(100);
      expect(await store.renew('renew', 'a', 300)).toBe(true);
      expect((await store.acquire('renew', `b${i}`, 1, 300)).acquired).toBe(false);
    }
    const ttl = await one.pttl(store.keyOf('renew'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    // Not renewed any more (its instance died): gone within one time to live.
    await sleep(350);
    expect(await store.renew('renew', 'a', 300)).toBe(false);
    expect((await store.acquire('renew', 'c', 1, 300)).acquired).toBe(true);
    await store.release('renew', 'c');
    expect(await store.renew('renew', 'c', 300)).toBe(false);
  });

  it('refuses bad options', () => {
    expect(() => createRedisConcurrencyStore({ redis: one, prefix: 'a{b' })).toThrow(/prefix/);
    expect(() => createRedisConcurrencyStore({ redis: one, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => createRedisConcurrencyStore({ redis: {} as never })).toThrow(/evalsha/);
    expect(() => createRedisConcurrencyStore({ redis: one, prefx: 'x' } as never)).toThrow(/prefix/);
  });
});
