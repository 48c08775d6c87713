/**
 * The guard's budget of refused credentials per client address, shared: counted in
 * Redis, so two instances (two guards, two connections) share one budget.
 * Real Redis (TEST_REDIS_URL); key store lookups counted on a memory store.
 */
import { createApiKeyGuard, createKeyring, createMemoryKeyStore, generateKey, type KeyStore } from '@keyset/core';
import { deleteKeys, redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from './redis-rate-limit-store.ts';

const url = await redisUrl();
const prefix = `keyset:test:refused:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
const quiet = { warn() {}, error() {} };

describe.skipIf(url === undefined)('refused credentials counted in Redis (two instances)', () => {
  let a: Redis;
  let b: Redis;
  beforeAll(async () => {
    a = new Redis(url as string, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    b = new Redis(url as string, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    await Promise.all([a.connect(), b.connect()]);
  });
  afterAll(async () => {
    if (a === undefined) return;
    await deleteKeys(a, prefix);
    a.disconnect();
    b.disconnect();
  });

  it('one budget for the address across both: at most the budget plus one lookup per instance', async () => {
    const memory = createMemoryKeyStore();
    let lookups = 0;
    const store: KeyStore = { ...memory, findByDigest: (digest) => (lookups++, memory.findByDigest(digest)) };
    const guards = [a, b].map((redis) =>
      createApiKeyGuard({
        keyring: createKeyring({ store, prefix: 'acme_live', lastUsed: false, logger: quiet }),
        refusedCredentials: { limit: 10, windowSeconds: 3600, store: createRedisRateLimitStore({ redis, prefix }), logger: quiet },
      }),
    );
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      statuses.push(
        await guards[i % 2]!.check({ authorization: `ApiKey ${generateKey('acme_live')}`, url: '/', remoteAddress: '198.51.100.23' }).then(
          () => 200,
          (error: { status?: number; code?: string }) => (error.code === 'rate_limited' ? 429 : 401),
        ),
      );
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(lookups).toBeLessThanOrEqual(10 + 2);
    expect(statuses.slice(-50).every((s) => s === 429)).toBe(true);
    // The count lives in Redis under the address.
    expect(await a.keys(`${prefix}*198.51.100.23*`)).not.toHaveLength(0);
  });
});
