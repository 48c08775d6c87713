// Compile-time check (pnpm typecheck) that ioredis clients fit the structural interfaces.
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisScriptClient, RevocationPublisher, RevocationSubscriber } from './index.ts';

describe('structural client types', () => {
  it('accept ioredis Redis and Cluster', () => {
    const fits = (redis: Redis, cluster: Cluster): unknown[] => {
      const a: RedisScriptClient = redis;
      const b: RedisScriptClient = cluster;
      const c: RevocationPublisher = redis;
      const d: RevocationSubscriber = redis;
      const e: RevocationPublisher = cluster;
      return [a, b, c, d, e];
    };
    expect(typeof fits).toBe('function');
  });
});
