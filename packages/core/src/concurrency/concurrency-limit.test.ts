/**
 * The guard's in-flight limit: leases per key, `release()` on the result, 429
 * `concurrency_limited` with `Retry-After` past `max`, store failures, options.
 */
import { describe, expect, it } from 'vitest';
import { rejection } from '@keyset/test-support';
import { ConfigError, isKeysetError, toProblem } from '../errors.ts';
import { createApiKeyGuard, type ApiKeyGuardOptions } from '../auth/api-key-guard.ts';
import { createConcurrencyLimit, type ConcurrencyOptions } from './concurrency-limit.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createOwnerAdmin } from '../admin/owner-admin.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import type { ConcurrencyStore } from './types.ts';
import { createMemoryConcurrencyStore } from './memory-concurrency-store.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';

const quiet = { warn() {}, error() {} };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function world(concurrency: ConcurrencyOptions | undefined, extra: Partial<ApiKeyGuardOptions> = {}) {
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', lastUsed: false, logger: quiet });
  const admin = createKeyAdmin(keyring);
  const a = (await admin.issue({ name: 'a', scopes: ['orders:read'], metadata: { plan: 'pro' } })).key;
  const b = (await admin.issue({ name: 'b', scopes: ['orders:read'] })).key;
  const guard = createApiKeyGuard({ keyring, refusedCredentials: false, ...(concurrency && { concurrency: createConcurrencyLimit(concurrency) }), ...extra });
  const check = (key: string) => guard.check({ authorization: `ApiKey ${key}`, url: '/api/orders' }, { scopes: ['orders:read'] });
  return { a, b, check };
}

describe('in-flight limit', () => {
  it('admits max requests of a key at once, refuses the next with 429 concurrency_limited, admits again after a release', async () => {
    const { a, b, check } = await world({ max: 2 });
    const first = await check(a);
    const second = await check(a);
    const error = await rejection(check(a));
    expect(isKeysetError(error) && error.code).toBe('concurrency_limited');
    const problem = toProblem(error);
    expect(problem.status).toBe(429);
    expect(problem.headers['retry-after']).toBe('1');
    expect(problem.body).toMatchObject({ code: 'concurrency_limited', max_in_flight: 2, retry_after: 1 });
    expect(JSON.stringify(problem)).not.toContain(a.slice(10));
    // Another key has its own leases.
    await check(b);
    first.release?.();
    first.release?.(); // a second call gives back nothing more
    const third = await check(a);
    await expect(check(a)).rejects.toMatchObject({ code: 'concurrency_limited' });
    second.release?.();
    third.release?.();
    await check(a);
  });

  it('max read from the key; null leaves a key unlimited', async () => {
    const { a, b, check } = await world({ max: (key) => (key.metadata.plan === 'pro' ? 1 : null) });
    await check(a);
    await expect(check(a)).rejects.toMatchObject({ code: 'concurrency_limited' });
    const results = await Promise.all(Array.from({ length: 20 }, () => check(b)));
    expect(results).toHaveLength(20);
  });

  it('a concurrency refusal counts against the rate limit and carries its headers; a rate-limited request gives its lease back', async () => {
    const limiter = createRateLimiter({ defaultPolicy: { limit: 3, windowSeconds: 60 } });
    const { a, check } = await world({ max: 1 }, { limiter });
    const held = await check(a);
    const error = await rejection(check(a));
    expect(toProblem(error).headers).toMatchObject({ 'retry-after': '1' });
    expect(Object.keys(toProblem(error).headers).some((name) => name.toLowerCase().startsWith('ratelimit'))).toBe(true);
    held.release?.();
    await check(a); // third request of the rate limit
    await expect(check(a)).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('a request refused for its lease spends no quota credit, its own or its owner\'s; one refused by a quota gives its lease back', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', lastUsed: false, logger: quiet });
    await createOwnerAdmin(keyring).create({ id: 'cus_q', quota: { remaining: 5, refill: null } });
    const key = (await createKeyAdmin(keyring).issue({ name: 'k', scopes: [], ownerId: 'cus_q', quota: { remaining: 10, refill: null } })).key;
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1000, windowSeconds: 60 } });
    const guard = createApiKeyGuard({ keyring, limiter, refusedCredentials: false, concurrency: createConcurrencyLimit({ max: 1 }) });
    const check = () => guard.check({ authorization: `ApiKey ${key}`, url: '/x' });
    const held = await check();
    // A client waiting for the slot: three refusals, none of them spends a credit.
    for (let i = 0; i < 3; i++) await expect(check()).rejects.toMatchObject({ code: 'concurrency_limited' });
    held.release?.();
    // The owner's 5 credits: one spent by the held request, four left for the next four.
    for (let i = 0; i < 4; i++) (await check()).release?.();
    const exhausted = await rejection(check());
    expect(toProblem(exhausted).body).toMatchObject({ code: 'quota_exhausted', quota: 'owner' });
    // The quota's refusal gave the lease back: the next answer is the quota again, not the in-flight limit.
    await expect(check()).rejects.toMatchObject({ code: 'quota_exhausted' });
  });

  it('a failing store: 503 unavailable by default, admitted without a lease with onStoreError open', async () => {
    const broken: ConcurrencyStore = {
      acquire: () => Promise.reject(new Error('connection refused')),
      release: () => Promise.reject(new Error('connection refused')),
    };
    const warnings: [Record<string, unknown>, string][] = [];
    const logger = { warn: (details: Record<string, unknown>, message: string) => void warnings.push([details, message]) };
    const closed = await world({ max: 1, store: broken, logger });
    await expect(closed.check(closed.a)).rejects.toMatchObject({ code: 'unavailable' });
    expect(warnings).toEqual([[{ mode: 'closed', error: 'Error: connection refused' }, expect.stringMatching(/in-flight store failed; refusing requests with 503/)]]);
    warnings.length = 0;
    const open = await world({ max: 1, store: broken, onStoreError: 'open', logger });
    (await open.check(open.a)).release?.();
    (await open.check(open.a)).release?.();
    // Told once per outage, not once per request, and with no key text.
    expect(warnings).toEqual([[{ mode: 'open', error: 'Error: connection refused' }, expect.stringMatching(/in-flight store failed; admitting requests without a lease/)]]);
    expect(JSON.stringify(warnings)).not.toContain(open.a.slice(10));
  });

  it('a failing store\'s 503 is not charged to the key\'s rate limit: the fault is the server\'s, not the client\'s', async () => {
    let failing = true;
    const memory = createMemoryConcurrencyStore();
    const store: ConcurrencyStore = {
      acquire: (...args) => (failing ? Promise.reject(new Error('ECONNRESET')) : memory.acquire(...args)),
      release: (...args) => memory.release(...args),
    };
    const limiter = createRateLimiter({ defaultPolicy: { limit: 2, windowSeconds: 60 } });
    const { a, check } = await world({ max: 5, store, logger: quiet }, { limiter });
    for (let i = 0; i < 5; i++) await expect(check(a)).rejects.toMatchObject({ code: 'unavailable' });
    failing = false;
    // The key's two requests a minute are all still there.
    (await check(a)).release?.();
    (await check(a)).release?.();
    await expect(check(a)).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('a store that answers again after failing is logged once, and leases are counted again', async () => {
    let failing = true;
    const memory = new Map<string, Set<string>>();
    const store: ConcurrencyStore = {
      acquire: (holder, id, max) => {
        if (failing) return Promise.reject(new Error('ECONNRESET'));
        const held = memory.get(holder) ?? new Set<string>();
        memory.set(holder, held);
        if (held.size >= max) return Promise.resolve({ acquired: false });
        held.add(id);
        return Promise.resolve({ acquired: true });
      },
      release: (holder, id) => void memory.get(holder)?.delete(id),
    };
    const messages: string[] = [];
    const { a, check } = await world({ max: 1, store, onStoreError: 'open', logger: { warn: (_d, message) => void messages.push(message) } });
    await check(a);
    await check(a); // two admitted over the cap of 1: the store is down
    failing = false;
    const held = await check(a);
    await expect(check(a)).rejects.toMatchObject({ code: 'concurrency_limited' });
    held.release?.();
    expect(messages.map((m) => m.split(';')[0])).toEqual(['in-flight store failed', 'in-flight store answers again']);
  });

  it('a release that fails is swallowed (the lease expires instead)', async () => {
    const store: ConcurrencyStore = {
      acquire: () => Promise.resolve({ acquired: true }),
      release: () => {
        throw new Error('gone');
      },
    };
    const { a, check } = await world({ max: 1, store });
    expect(() => {
      void check(a).then((r) => r.release?.());
    }).not.toThrow();
    (await check(a)).release?.();
  });

  it('ownerMax: all keys of one owner share it, each key keeps its own max, keys without an owner are not counted', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', lastUsed: false, logger: quiet });
    await createOwnerAdmin(keyring).create({ id: 'cus_42', metadata: { plan: 'pro' } });
    const admin = createKeyAdmin(keyring);
    const [k1, k2, k3, lone] = await Promise.all(
      ['k1', 'k2', 'k3', 'lone'].map(async (name) => (await admin.issue({ name, scopes: [], ...(name === 'lone' ? {} : { ownerId: 'cus_42' }) })).key),
    );
    const guard = createApiKeyGuard({ keyring, refusedCredentials: false, concurrency: createConcurrencyLimit({ max: 2, ownerMax: (owner) => (owner.metadata.plan === 'pro' ? 3 : 1) }) });
    const check = (key: string) => guard.check({ authorization: `ApiKey ${key}`, url: '/x' });
    const held = [await check(k1 as string), await check(k1 as string), await check(k2 as string)];
    // The owner's 3 are taken: k2 and k3 are refused by the owner; k1 by its own max.
    for (const key of [k2, k3]) {
      const error = await rejection(check(key as string));
      expect(toProblem(error).body).toMatchObject({ code: 'concurrency_limited', max_in_flight: 3, limited: 'owner' });
    }
    expect(toProblem(await rejection(check(k1 as string))).body).toMatchObject({ max_in_flight: 2, limited: 'key' });
    // A key without an owner is limited by max only.
    (await check(lone as string)).release?.();
    // A refusal by the owner held no key lease: once the owner has room, k3 gets in at once.
    held[2]!.release?.();
    const k3Lease = await check(k3 as string);
    await expect(check(k2 as string)).rejects.toMatchObject({ code: 'concurrency_limited' });
    k3Lease.release?.();
    held[0]!.release?.();
    held[1]!.release?.();
    // Everything given back: k2's max of 2 and the owner's 3 all free again.
    const again = await Promise.all([check(k2 as string), check(k2 as string), check(k3 as string)]);
    expect(again).toHaveLength(3);
  });

  it('renews a lease while its request is at work: held three times its time to live, the cap stays full', async () => {
    // Real time, short leases (0.6 s, renewed every 0.2 s): a stream three times longer
    // than its lease admits no extra request until it ends.
    const store = createMemoryConcurrencyStore();
    const { a, check } = await world({ max: 1, store, leaseTtlSeconds: 0.6 });
    const stream = await check(a);
    for (let i = 0; i < 6; i++) {
      await sleep(300);
      await expect(check(a)).rejects.toMatchObject({ code: 'concurrency_limited' });
    }
    stream.release?.();
    const next = await check(a);
    next.release?.();
    // A lease nobody renews (its instance died) ends within one time to live.
    expect(store.acquire('key:dead', 'x', 1, 600)).toEqual({ acquired: true });
    await sleep(650);
    expect(store.acquire('key:dead', 'y', 1, 600)).toEqual({ acquired: true });
  });

  it('the memory store renews only a live lease', () => {
    let now = 0;
    const store = createMemoryConcurrencyStore({ clock: () => now });
    store.acquire('key:a', 'l1', 1, 1000);
    now = 900;
    expect(store.renew?.('key:a', 'l1', 1000)).toBe(true);
    now = 1500; // past the first expiry, within the renewed one
    expect(store.acquire('key:a', 'l2', 1, 1000)).toEqual({ acquired: false });
    now = 1900;
    expect(store.renew?.('key:a', 'l1', 1000)).toBe(false);
    expect(store.renew?.('key:a', 'unknown', 1000)).toBe(false);
    store.release('key:a', 'l1');
    expect(store.renew?.('key:a', 'l1', 1000)).toBe(false);
  });

  it('draws its lease ids from the injected crypto provider, as every factory does', async () => {
    const ids: string[] = [];
    const memory = createMemoryConcurrencyStore();
    const store: ConcurrencyStore = {
      acquire: (holder, id, max, ttlMs) => (ids.push(id), memory.acquire(holder, id, max, ttlMs)),
      release: (holder, id) => memory.release(holder, id),
    };
    const fixed = { ...nodeCrypto, randomBytes: (n: number) => new Uint8Array(n).fill(0xab) };
    const { a, check } = await world({ max: 2, store, crypto: fixed });
    (await check(a)).release?.();
    (await check(a)).release?.();
    expect(ids).toEqual([`${'ab'.repeat(16)}:1`, `${'ab'.repeat(16)}:2`]);
  });

  it('options are checked when the limit is made; the guard takes only a built limit', async () => {
    await expect(world({ max: 0 })).rejects.toThrow(ConfigError);
    await expect(world({})).rejects.toThrow(/max.*ownerMax/);
    await expect(world({ ownerMax: 0 })).rejects.toThrow(/ownerMax/);
    await expect(world({ max: 1.5 })).rejects.toThrow(/integer/);
    await expect(world({ max: 1, leaseTtlSeconds: 0 })).rejects.toThrow(/leaseTtlSeconds/);
    await expect(world({ max: 1, onStoreError: 'local' as never })).rejects.toThrow(/onStoreError/);
    await expect(world({ max: 1, store: {} as never })).rejects.toThrow(/ConcurrencyStore/);
    await expect(world({ max: 1, logger: console.warn as never })).rejects.toThrow(/logger must have a warn/);
    await expect(world({ max: 1, leaseTtl: 5 } as never)).rejects.toThrow(/leaseTtlSeconds/);
    const { a, check } = await world({ max: () => 0 });
    await expect(check(a)).rejects.toThrow(ConfigError);
    // The options object itself is not a limit: the guard says what to build.
    await expect(world(undefined, { concurrency: { max: 1 } as never })).rejects.toThrow(/createConcurrencyLimit/);
  });
});
