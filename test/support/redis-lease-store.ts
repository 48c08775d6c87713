/**
 * The Redis lease store for HTTP-level lease tests (`describeLeaseRenewal` of
 * `@keyset/conformance`): each `open()` has its own client and key prefix, and its close
 * deletes what it wrote. `undefined` when no Redis answers (tests skip; CI=true fails).
 */
import { Redis } from 'ioredis';
import { createRedisConcurrencyStore } from '@keyset/redis';
import type { ConcurrencyStore } from '@keyset/core';
import { deleteKeys } from './redis-keys.ts';
import { redisUrl } from './services.ts';

/** A name and a factory of fresh stores on the test Redis, or `undefined` without one. */
export async function redisLeaseStore(): Promise<{ name: string; open(): Promise<{ store: ConcurrencyStore; close(): Promise<void> }> } | undefined> {
  const url = await redisUrl();
  if (url === undefined) return undefined;
  return {
    name: 'Redis store',
    open: async () => {
      const redis = new Redis(url, { maxRetriesPerRequest: 1 });
      const prefix = `keyset:test:lease-http:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
      // A generous call timeout: on a loaded machine a slow answer must not turn a 429 into
      // the store-outage 503 this test is not about.
      const store = createRedisConcurrencyStore({ redis, prefix, timeoutMs: 10_000 });
      return {
        store,
        close: async () => {
          await deleteKeys(redis, prefix);
          redis.disconnect();
        },
      };
    },
  };
}
