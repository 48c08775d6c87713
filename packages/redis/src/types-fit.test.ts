// Compile-time check (pnpm typecheck) that ioredis clients fit the structural interfaces.
import type { Keyring } from '@keyset/core';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisScriptClient, RevocableKeyring, RevocationPublisher, RevocationSubscriber } from './index.ts';

describe('structural client types', () => {
  it('accept ioredis Redis and Cluster, and the core Keyring', () => {
    const fits = (redis: Redis, cluster: Cluster, keyring: Keyring): unknown[] => {
      const k: RevocableKeyring = keyring;
      const a: RedisScriptClient = redis;
      const b: RedisScriptClient = cluster;
      const c: RevocationPublisher = redis;
      const d: RevocationSubscriber = redis;
      const e: RevocationPublisher = cluster;
      return [a, b, c, d, e, k];
    };
    expect(typeof fits).toBe('function');
  });
});
