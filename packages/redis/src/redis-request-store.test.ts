/**
 * The request store on a real Redis: a guard whose limiter and in-flight limit share
 * `createRedisRequestStore` (one script decides leases, rate limits and quotas) against a
 * guard over the three separate Redis stores (one call each, the leases first), on the
 * same sequence of requests from keys with and without an owner, with every feature on
 * (key and owner rate limits, key and owner quotas, key and owner in-flight caps, two
 * route costs), and requests finishing in any order: the same outcome, request by
 * request (admitted, or the same problem), and the same counts left in Redis. Plus: both
 * leases of a request given back in one call, a lost quota count rebuilt from the durable
 * store, and keys that would span two Cluster slots refused before any call.
 */
import fc from 'fast-check';
import { createApiKeyGuard, createConcurrencyLimit, createKeyAdmin, createKeyring, createMemoryKeyStore, createOwnerAdmin, createRateLimiter, isKeysetError, type ReleaseLease } from '@keyset/core';
import { createPostgresQuotaStore, migrate } from '@keyset/postgres';
import { deleteKeys, postgresUrl, redisUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConcurrencyStore } from './redis-concurrency-store.ts';
import { createRedisQuotaStore } from './redis-quota-store.ts';
import { createRedisRateLimitStore } from './redis-rate-limit-store.ts';
import { createRedisRequestStore } from './redis-request-store.ts';

const url = await redisUrl();
const pgUrl = await postgresUrl();
const run = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const quiet = { warn() {}, error() {} };
let redis: Redis;

beforeAll(() => {
  if (url !== undefined) redis = new Redis(url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  if (url === undefined) return;
  await deleteKeys(redis, `keyset:test:${run}:`);
  redis.disconnect();
});

/** Counts the script calls a client sends. */
function counting(client: Redis): { client: Redis; calls: () => number } {
  let calls = 0;
  const counted = {
    evalsha: (...args: Parameters<Redis['evalsha']>) => ((calls += 1), client.evalsha(...args)),
    eval: (...args: Parameters<Redis['eval']>) => ((calls += 1), client.eval(...args)),
  } as unknown as Redis;
  return { client: counted, calls: () => calls };
}

async function world(round: number) {
  const keys = createMemoryKeyStore();
  const keyring = createKeyring({ store: keys, prefix: 'acme_live', lastUsed: false, logger: quiet });
  await createOwnerAdmin(keyring).create({ id: 'cus_a', rateLimits: [{ name: 'minute', limit: 6, windowSeconds: 600 }], quota: { remaining: 9 } });
  const admin = createKeyAdmin(keyring);
  const issued = [
    await admin.issue({ name: 'alone', scopes: ['orders:read'], rateLimit: { limit: 5, windowSeconds: 600 }, quota: { remaining: 6 } }),
    await admin.issue({ name: 'owned-1', scopes: ['orders:read'], ownerId: 'cus_a', rateLimit: { limit: 4, windowSeconds: 600 }, quota: { remaining: 5 } }),
    await admin.issue({ name: 'owned-2', scopes: ['orders:read'], ownerId: 'cus_a' }),
  ];
  const prefix = (what: string) => `keyset:test:${run}:${round}:${what}:`;
  const counted = counting(redis);
  // Long timeouts: on a loaded machine a slow reply must not turn into one side's outage answer.
  const timeoutMs = 5_000;
  const store = createRedisRequestStore({ redis: counted.client, timeoutMs, prefixes: { rateLimits: prefix('rl1'), quotas: prefix('q1'), leases: prefix('l1') } });
  const defaultPolicy = { limit: 3, windowSeconds: 600 };
  const inFlight = { max: 2, ownerMax: 3, logger: quiet };
  const oneStep = createApiKeyGuard({
    keyring,
    limiter: createRateLimiter({ store, defaultPolicy, logger: quiet, timeoutMs: 2 * timeoutMs }),
    concurrency: createConcurrencyLimit({ ...inFlight, store }),
  });
  const stepByStep = createApiKeyGuard({
    keyring,
    limiter: createRateLimiter({
      store: createRedisRateLimitStore({ redis, timeoutMs, prefix: prefix('rl2') }),
      quotaStore: createRedisQuotaStore({ redis, timeoutMs, prefix: prefix('q2') }),
      defaultPolicy,
      logger: quiet,
      timeoutMs: 2 * timeoutMs,
    }),
    concurrency: createConcurrencyLimit({ ...inFlight, store: createRedisConcurrencyStore({ redis, timeoutMs, prefix: prefix('l2') }) }),
  });
  // One request of a key of its own before counting: on a Redis that has not seen this
  // script yet (a fresh server, a changed script), the first call is EVALSHA, NOSCRIPT, then
  // EVAL: two calls once per script, not per request.
  const warm = await admin.issue({ name: 'warm-up', scopes: ['orders:read'] });
  (await oneStep.check({ authorization: `ApiKey ${warm.key}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'] })).release?.();
  // Its lease goes back off the response path: counting starts once it is back.
  while ((await leasesHeld(prefix('l1'))) !== 0) await new Promise((resolve) => setTimeout(resolve, 5));
  return { oneStep, stepByStep, texts: issued.map((i) => i.key), ids: issued.map((i) => i.record.id), warmId: warm.record.id, store, calls: counted.calls, prefix };
}

type Outcome = { ok: true; headers: Record<string, string> } | { ok: false; code: string; body: unknown };

/** An admitted request at work: its release, and how many leases it holds. */
interface Held {
  release: ReleaseLease;
  leases: number;
}

async function outcome(guard: ReturnType<typeof createApiKeyGuard>, text: string, cost: number, held: Held[], leases: number): Promise<Outcome> {
  try {
    const result = await guard.check({ authorization: `ApiKey ${text}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'], cost });
    held.push({ release: result.release ?? (() => {}), leases });
    return { ok: true, headers: result.headers };
  } catch (error) {
    if (!isKeysetError(error)) throw error;
    return { ok: false, code: error.code, body: { detail: error.detail, extensions: error.extensions } };
  }
}

/** A problem body with its retry time taken out (see where it is compared). */
const ticking = (body: unknown): unknown => {
  const { detail, extensions } = body as { detail: string; extensions: Record<string, unknown> };
  const { retry_after: _retry, ...rest } = extensions;
  return { detail: detail.replace(/retry in \d+ s/, 'retry in … s'), extensions: rest };
};

/** Leases live in Redis under `prefix`. */
async function leasesHeld(prefix: string): Promise<number> {
  let total = 0;
  for (const key of await redis.keys(`${prefix}*`)) total += await redis.zcard(key);
  return total;
}

/** Leases the admitted requests hold: the key's, and the owner's for a key with an owner. */
const leasesOf = (held: readonly Held[]): number => held.reduce((sum, h) => sum + h.leases, 0);

/** A header's numbers but `t` (seconds until reset, which ticks between the two calls). */
const steady = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace(/;t=\d+/g, '')]));

describe.skipIf(url === undefined)('createRedisRequestStore', () => {
  it('decides every request as the three separate stores do, in one call (and one to give the leases back)', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.record({ key: fc.nat(2), cost: fc.constantFrom(1, 2) }), fc.record({ finish: fc.nat(5) })), { minLength: 1, maxLength: 30 }),
        async (steps) => {
          round += 1;
          const w = await world(round);
          const held: [Held[], Held[]] = [[], []];
          for (const s of steps) {
            if ('finish' in s) {
              // The same request finishes on both sides.
              if (held[0].length === 0) continue;
              const i = s.finish % held[0].length;
              const [one] = held[0].splice(i, 1);
              const [other] = held[1].splice(i, 1);
              one!.release();
              other!.release();
              // Release is off the response path: wait until both sides gave theirs back.
              while ((await leasesHeld(w.prefix('l1'))) !== leasesOf(held[0]) || (await leasesHeld(w.prefix('l2'))) !== leasesOf(held[1])) {
                await new Promise((resolve) => setTimeout(resolve, 5));
              }
              continue;
            }
            const text = w.texts[s.key]!;
            const before = w.calls();
            // The key without an owner holds its own lease; the others their owner's too.
            const leases = s.key === 0 ? 1 : 2;
            const a = await outcome(w.oneStep, text, s.cost, held[0], leases);
            const b = await outcome(w.stepByStep, text, s.cost, held[1], leases);
            expect(a.ok, JSON.stringify({ a, b })).toBe(b.ok);
            if (a.ok && b.ok) {
              expect(steady(a.headers)).toEqual(steady(b.headers));
              expect(w.calls() - before).toBe(1);
            }
            if (!a.ok && !b.ok && a.code === 'quota_exhausted' && b.code === 'concurrency_limited') {
              // The refusal memory answers an exhausted quota (until its refill) without
              // asking about leases; the store names the full in-flight cap first.
              expect(w.calls() - before).toBe(0);
              continue;
            }
            if (!a.ok && !b.ok) {
              expect(a.code).toBe(b.code);
              // The two sides decide a moment apart: a retry time in whole seconds may tick
              // between them.
              const retryA = Number((a.body as { extensions: { retry_after?: number } }).extensions.retry_after ?? 0);
              const retryB = Number((b.body as { extensions: { retry_after?: number } }).extensions.retry_after ?? 0);
              expect(retryB - retryA).toBeGreaterThanOrEqual(-1);
              expect(retryB - retryA).toBeLessThanOrEqual(1);
              expect(ticking(a.body)).toEqual(ticking(b.body));
              expect(w.calls() - before).toBeLessThanOrEqual(1);
            }
          }
          for (const h of [...held[0], ...held[1]]) h.release();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('gives both leases of a request back in one call', async () => {
    const w = await world(1000);
    const before = w.calls();
    const result = await w.oneStep.check({ authorization: `ApiKey ${w.texts[1]}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'] });
    expect(w.calls() - before).toBe(1);
    expect(await redis.zcard(w.store.leases.keyOf('owner:cus_a'))).toBe(1);
    expect(await redis.zcard(w.store.leases.keyOf(`key:${w.ids[1]}`, 'owner:cus_a'))).toBe(1);
    result.release!();
    for (;;) {
      if ((await redis.zcard(w.store.leases.keyOf('owner:cus_a'))) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await redis.zcard(w.store.leases.keyOf(`key:${w.ids[1]}`, 'owner:cus_a'))).toBe(0);
    expect(w.calls() - before).toBe(2);
  });

  it('renews the leases it took in one step while their request is at work, and frees the slot when it ends', async () => {
    const w = await world(1003);
    const limiter = createRateLimiter({ store: w.store, defaultPolicy: { limit: 1000, windowSeconds: 60 }, logger: quiet });
    const keys = createMemoryKeyStore();
    const keyring = createKeyring({ store: keys, prefix: 'acme_live', lastUsed: false, logger: quiet });
    await createOwnerAdmin(keyring).create({ id: 'cus_r' });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'stream', scopes: [], ownerId: 'cus_r' });
    // A lease lives 1.5 s unless renewed (every 500 ms while its request is at work).
    const guard = createApiKeyGuard({ keyring, limiter, concurrency: createConcurrencyLimit({ max: 1, ownerMax: 1, store: w.store, leaseTtlSeconds: 1.5, logger: quiet }) });
    const request = { authorization: `ApiKey ${key}`, url: '/', remoteAddress: '127.0.0.1' };
    const first = await guard.check(request);
    // Over two lease lifetimes later the request is still at work, and still holds both slots.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await expect(guard.check(request)).rejects.toMatchObject({ code: 'concurrency_limited' });
    first.release!();
    for (;;) {
      if ((await redis.zcard(w.store.leases.keyOf('owner:cus_r'))) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    (await guard.check(request)).release!();
  });

  it('keeps every count of a key with an owner in the owner\'s hash tag, and of a key without one in its own', async () => {
    const w = await world(1001);
    await w.oneStep.check({ authorization: `ApiKey ${w.texts[1]}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'] });
    await w.oneStep.check({ authorization: `ApiKey ${w.texts[0]}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'] });
    const written = await redis.keys(`${w.prefix('')}*`.replace(/::\*$/, '*'));
    const tags = new Set(written.map((k) => /\{([^}]*)\}/.exec(k)?.[1]));
    // The warm-up key (see world()) wrote under its own tag too.
    expect(tags).toEqual(new Set(['owner:cus_a', w.ids[0], w.warmId]));
  });

  it('refuses a decision whose keys would span two Cluster slots, before any call', async () => {
    const w = await world(1002);
    const before = w.calls();
    await expect(
      w.store.decideRequest({ limits: [{ key: 'a', policy: { limit: 1, windowSeconds: 1 } }], quotas: [], leases: [{ holder: 'key:b', leaseId: 'x', max: 1, ttlMs: 1000 }] }),
    ).rejects.toThrow(/one partition/);
    expect(w.calls()).toBe(before);
  });

  it.skipIf(pgUrl === undefined)('rebuilds a lost quota count from the durable store before spending from it', async () => {
    const schema = uniqueSchema('keyset_reqdur');
    const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    try {
      await migrate(pool, { schema });
      const durable = createPostgresQuotaStore({ client: pool, schema });
      const prefixes = { rateLimits: `keyset:test:${run}:dur:rl:`, quotas: `keyset:test:${run}:dur:q:`, leases: `keyset:test:${run}:dur:l:` };
      const store = createRedisRequestStore({ redis, prefixes, durable, flushIntervalMs: 3_600_000, logger: quiet });
      const limiter = createRateLimiter({ store, defaultPolicy: { limit: 1000, windowSeconds: 60 }, logger: quiet });
      const quota = { remaining: 5, refill: null, setAt: new Date() };
      for (let i = 0; i < 3; i++) await limiter.check('key_dur', undefined, { quota });
      await store.flush();
      // Redis loses the count (a restart without persistence, a failover to a replica behind).
      await redis.del(store.quotas.keyOf('key_dur'));
      const result = await limiter.check('key_dur', undefined, { quota });
      expect(result.quota?.remaining).toBe(1); // 5 − 3 − 1, not 5 − 1
      await store.close();
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});
