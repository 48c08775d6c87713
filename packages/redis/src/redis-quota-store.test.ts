import { ConfigError } from '@keyset/core';
import { deleteKeys, describeQuotaStore, redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisQuotaStore, type RedisQuotaStore } from './index.ts';

const url = await redisUrl();
const prefix = `keyset:test:quota:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;

async function connect(address: string): Promise<Redis> {
  const redis = new Redis(address, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

describe.skipIf(url === undefined)('createRedisQuotaStore (real Redis)', () => {
  let a: Redis;
  let b: Redis;
  let stores: RedisQuotaStore[] = [];
  let n = 0;

  beforeAll(async () => {
    a = await connect(url as string);
    b = await connect(url as string);
    // Two connections, as two instances would have: the script is the only thing that serialises them.
    stores = [createRedisQuotaStore({ redis: a, prefix, timeoutMs: 5000 }), createRedisQuotaStore({ redis: b, prefix, timeoutMs: 5000 })];
  });

  afterAll(async () => {
    if (a === undefined) return;
    await deleteKeys(a, prefix);
    a.disconnect();
    b.disconnect();
  });

  describeQuotaStore('Redis, two connections', () => ({ stores, freshKey: () => `key_${n++}` }));

  it('uses one hash-tagged key per identity, without expiry (a lost count would hand credits back)', async () => {
    const store = stores[0]!;
    await store.spend({ key: 'key_ttl', generation: 1, initial: 5, period: 0, refillAmount: null, cost: 1 });
    expect(store.keyOf('key_ttl')).toBe(`${prefix}{key_ttl}`);
    expect(await a.ttl(store.keyOf('key_ttl'))).toBe(-1);
    expect(await a.hgetall(store.keyOf('key_ttl'))).toEqual({ g: '1', p: '0', r: '4' });
  });

  it('reloads the script after SCRIPT FLUSH-like loss (NOSCRIPT → EVAL)', async () => {
    const store = createRedisQuotaStore({ redis: { evalsha: () => Promise.reject(new Error('NOSCRIPT No matching script')), eval: a.eval.bind(a) }, prefix });
    expect(await store.spend({ key: `key_${n++}`, generation: 1, initial: 2, period: 0, refillAmount: null, cost: 2 })).toEqual({ allowed: true, remaining: 0 });
  });

  it('refuses bad options with ConfigError', () => {
    expect(() => createRedisQuotaStore({ redis: a, prefix: 'a{b' })).toThrow(ConfigError);
    expect(() => createRedisQuotaStore({ redis: a, timeoutMs: 0 })).toThrow(ConfigError);
  });
});
