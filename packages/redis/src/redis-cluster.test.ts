/**
 * Redis Cluster, for real: this file starts its own 3-master cluster (redis-server
 * --cluster-enabled yes on free local ports, in temp dirs, joined by
 * `redis-cli --cluster create`), and stops the servers by PID afterwards, even when a
 * test failed. Proves the rate-limit store's one-script decisions stay in one slot
 * (hash-tagged keys, no CROSSSLOT) across shards, as do a key's and its owner's quota
 * spends, and a whole request (leases, limits, quotas of a key and its owner) in the
 * request store's one script, and that the revocation bus works over
 * sharded pub/sub (SSUBSCRIBE/SPUBLISH) with acknowledgements.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKeyGuard, createConcurrencyLimit, createKeyAdmin, createKeyring, createMemoryKeyStore, createOwnerAdmin, createRateLimiter, type Keyring, type KeyStore } from '@keyset/core';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisQuotaStore, createRedisRateLimitStore, createRedisRequestStore, createRevocationBus, type RevocationBus } from './index.ts';
import { startRedis } from './own-redis-server.test-support.ts';

const available = spawnSync('redis-server', ['--version']).status === 0 && spawnSync('redis-cli', ['--version']).status === 0;
if (!available) {
  const message = 'redis-server and redis-cli are not on PATH: the Redis Cluster tests start their own cluster';
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping: ${message}`);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port whose cluster bus port (+10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (taken.has(port) || taken.has(port + 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) {
      taken.add(port);
      taken.add(port + 10_000);
      return port;
    }
  }
}

function startNode(port: number, dir: string): Promise<ChildProcess> {
  return startRedis(port, { args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--dir', dir], timeoutMs: 15_000 });
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${String(code)}:\n${output}`))));
  });
}

async function clusterOk(ports: readonly number[]): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const states = await Promise.all(ports.map((p) => run('redis-cli', ['-p', String(p), 'cluster', 'info']).catch(() => '')));
    if (states.every((s) => s.includes('cluster_state:ok'))) return;
    await sleep(100);
  }
  throw new Error('the cluster never reached cluster_state:ok');
}

describe.skipIf(!available)('Redis Cluster (own 3-master cluster)', () => {
  const nodes: ChildProcess[] = [];
  const dirs: string[] = [];
  const ports: number[] = [];
  const clusters: Cluster[] = [];

  beforeAll(async () => {
    const taken = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort(taken);
      const dir = mkdtempSync(join(tmpdir(), 'keyset-cluster-'));
      dirs.push(dir);
      nodes.push(await startNode(port, dir));
      ports.push(port);
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    await clusterOk(ports);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clusters.map((c) => c.quit().catch(() => c.disconnect())));
    // By PID, each one we started, whatever happened above.
    await Promise.all(
      nodes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function connect(options: { shardedSubscribers?: boolean } = {}): Promise<Cluster> {
    const cluster = new Cluster(
      ports.map((port) => ({ host: '127.0.0.1', port })),
      { enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: 1 }, ...options },
    );
    cluster.on('error', () => undefined);
    clusters.push(cluster);
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve);
      cluster.once('error', reject);
    });
    return cluster;
  }

  it('is three masters that each own part of the slots', async () => {
    const cluster = await connect();
    expect(cluster.nodes('master')).toHaveLength(3);
  });

  it('rate-limit store: several policies of each identity in one script call, identities spread over every shard, exact limits', async () => {
    const cluster = await connect();
    const store = createRedisRateLimitStore({ redis: cluster, prefix: `keyset:cluster:${process.pid}:`, timeoutMs: 2000 });
    const policies = [
      { name: 'burst', limit: 3, windowSeconds: 3600 },
      { name: 'daily', limit: 1000, windowSeconds: 86_400 },
    ];
    const identities = Array.from({ length: 30 }, (_, i) => `key_cluster_${i}`);
    for (const id of identities) {
      const outcomes: boolean[][] = [];
      for (let i = 0; i < 4; i++) {
        // Both policies of one identity, all-or-nothing, in ONE script call: two keys, one slot.
        const decisions = await store.decide(policies.map((policy) => ({ key: id, policy })));
        outcomes.push(decisions.map((d) => d.allowed));
      }
      // The 4th request is over the burst limit; all-or-nothing: the daily one is refused with it.
      expect(outcomes).toEqual([[true, true], [true, true], [true, true], [false, false]]);
    }
    // The keys really are spread: every master holds some of them.
    const perMaster = await Promise.all(cluster.nodes('master').map((node) => node.dbsize()));
    expect(perMaster.every((n) => n > 0)).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(identities.length * 2);

    // A failover or restart empties the script cache: NOSCRIPT → EVAL, per shard.
    await Promise.all(cluster.nodes('master').map((node) => node.script('FLUSH')));
    const fresh = await store.decide(policies.map((policy) => ({ key: 'key_cluster_fresh', policy })));
    expect(fresh.map((d) => d.allowed)).toEqual([true, true]);
  });

  it("owner limits: a key's and its owner's policies in one script call (both in the owner's slot), the owner's limit shared by its keys across shards", async () => {
    const cluster = await connect();
    const store = createRedisRateLimitStore({ redis: cluster, prefix: 'keyset:owner-cluster:' });
    const limiter = createRateLimiter({ store, defaultPolicy: { limit: 100, windowSeconds: 3600 }, onStoreError: 'closed' });
    // Owners whose ids hash to different shards, 3 keys each, owner limit 7 per hour.
    const owners = ['cus_a', 'cus_b', 'cus_c', 'cus_d', 'cus_e', 'cus_f'].map((id) => ({ id, rateLimits: Object.freeze([{ name: 'hour', limit: 7, windowSeconds: 3600 }]) }));
    const admitted = new Map<string, number>();
    await Promise.all(
      owners.flatMap((owner) =>
        Array.from({ length: 12 }, (_, n) =>
          limiter.check(`key_${owner.id}_${n % 3}`, { limit: 3, windowSeconds: 3600 }, { owner }).then(
            () => admitted.set(owner.id, (admitted.get(owner.id) ?? 0) + 1),
            (error: unknown) => {
              if ((error as { code?: string }).code !== 'rate_limited') throw error;
            },
          ),
        ),
      ),
    );
    // Each key admits at most 3, each owner at most 7 over its 3 keys (9 by the keys alone).
    for (const owner of owners) expect(admitted.get(owner.id)).toBe(7);
    // The owners' keys sit on more than one shard, and each owner's on one only.
    const perNode = await Promise.all(cluster.nodes('master').map((node) => node.keys('keyset:owner-cluster:*')));
    expect(perNode.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
    for (const owner of owners) expect(perNode.filter((keys) => keys.some((k) => k.includes(`{owner:${owner.id}}`))).length).toBe(1);
    expect(store.keyOf('key_x', 'default', 'owner:cus_a')).toBe('keyset:owner-cluster:{owner:cus_a}:key_x:default');
  });

  it("owner quotas: a key's quota and its owner's spent in one script call in the owner's slot, the owner's credits shared by its keys across shards", async () => {
    const cluster = await connect();
    const quotaStore = createRedisQuotaStore({ redis: cluster, prefix: `keyset:owner-quota-cluster:${process.pid}:`, timeoutMs: 5_000 });
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000, windowSeconds: 3600 }, quotaStore, onStoreError: 'closed' });
    const setAt = new Date(Date.now() - 1_000);
    const owners = ['cus_a', 'cus_b', 'cus_c', 'cus_d', 'cus_e', 'cus_f'].map((id) => ({ id, rateLimits: null, quota: Object.freeze({ remaining: 7, refill: null, setAt }) }));
    const keyQuota = Object.freeze({ remaining: 3, refill: null, setAt });
    const admitted = new Map<string, number>();
    await Promise.all(
      owners.flatMap((owner) =>
        Array.from({ length: 12 }, (_, n) =>
          limiter.check(`key_${owner.id}_${n % 3}`, undefined, { quota: keyQuota, owner }).then(
            () => admitted.set(owner.id, (admitted.get(owner.id) ?? 0) + 1),
            (error: unknown) => {
              if ((error as { code?: string }).code !== 'quota_exhausted') throw error;
            },
          ),
        ),
      ),
    );
    // Each key spends at most 3, each owner at most 7 over its 3 keys (9 by the keys alone).
    for (const owner of owners) expect(admitted.get(owner.id)).toBe(7);
    for (const owner of owners) expect((await limiter.readOwnerQuota(owner.id, owner.quota)).remaining).toBe(0);
    const perNode = await Promise.all(cluster.nodes('master').map((node) => node.keys(`keyset:owner-quota-cluster:${process.pid}:*`)));
    expect(perNode.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
    for (const owner of owners) expect(perNode.filter((keys) => keys.some((k) => k.includes(`{owner:${owner.id}}`))).length).toBe(1);
  });

  it('request store: leases, key and owner limits and quotas of a request in one single-slot script, on keys with and without an owner spread over the shards', async () => {
    const cluster = await connect();
    const pid = process.pid;
    const store = createRedisRequestStore({
      redis: cluster,
      prefixes: { rateLimits: `keyset:req-cluster:${pid}:rl:`, quotas: `keyset:req-cluster:${pid}:q:`, leases: `keyset:req-cluster:${pid}:l:` },
      timeoutMs: 5_000,
    });
    const keys = createMemoryKeyStore();
    const keyring = createKeyring({ store: keys, prefix: 'acme_live', lastUsed: false, logger: { warn() {}, error() {} } });
    const texts: string[] = [];
    for (const id of ['cus_a', 'cus_b', 'cus_c']) {
      await createOwnerAdmin(keyring).create({ id, rateLimits: [{ name: 'hour', limit: 100, windowSeconds: 3600 }], quota: { remaining: 4 } });
      for (let n = 0; n < 2; n++) texts.push((await createKeyAdmin(keyring).issue({ name: `${id}-${n}`, scopes: [], ownerId: id, quota: { remaining: 3 } })).key);
    }
    for (let n = 0; n < 4; n++) texts.push((await createKeyAdmin(keyring).issue({ name: `alone-${n}`, scopes: [], quota: { remaining: 2 } })).key);
    const guard = createApiKeyGuard({
      keyring,
      limiter: createRateLimiter({ store, defaultPolicy: { limit: 100, windowSeconds: 3600 }, onStoreError: 'closed' }),
      concurrency: createConcurrencyLimit({ max: 5, ownerMax: 5, store }),
    });
    const admitted = new Map<string, number>();
    for (const text of texts) {
      for (let n = 0; n < 5; n++) {
        try {
          const result = await guard.check({ authorization: `ApiKey ${text}`, url: '/', remoteAddress: '127.0.0.1' });
          result.release?.();
          admitted.set(text, (admitted.get(text) ?? 0) + 1);
        } catch (error) {
          if ((error as { code?: string }).code !== 'quota_exhausted') throw error;
        }
      }
    }
    // Each owner's 4 credits over its two keys (3 each); each key alone its own 2.
    for (let o = 0; o < 3; o++) expect((admitted.get(texts[2 * o]!) ?? 0) + (admitted.get(texts[2 * o + 1]!) ?? 0)).toBe(4);
    for (const text of texts.slice(6)) expect(admitted.get(text)).toBe(2);
    const perNode = await Promise.all(cluster.nodes('master').map((node) => node.keys(`keyset:req-cluster:${pid}:*`)));
    expect(perNode.filter((found) => found.length > 0).length).toBeGreaterThan(1);
    // Everything of an owner's keys sits on one node, in its owner's slot.
    for (const id of ['cus_a', 'cus_b', 'cus_c']) expect(perNode.filter((found) => found.some((k) => k.includes(`{owner:${id}}`))).length).toBe(1);
    await store.close();
  });

  it('revocation bus over sharded pub/sub: evicted on B before A’s revoke() resolves (measured)', async () => {
    const store: KeyStore = createMemoryKeyStore();
    const channel = `keyset:cluster:revocations:${process.pid}`;
    const buses: RevocationBus[] = [];
    const instance = async (): Promise<Keyring> => {
      const keyring = createKeyring({ store, prefix: 'acme_test', lastUsed: false });
      const bus = createRevocationBus({
        publisher: await connect(),
        subscriber: await connect({ shardedSubscribers: true }),
        keyring,
        channel,
        sharded: true,
        logger: { warn: (f) => warnings.push(f) },
      });
      buses.push(bus);
      await bus.ready;
      return keyring;
    };
    const warnings: Record<string, unknown>[] = [];
    try {
      const a = await instance();
      const b = await instance();
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        const { key, record } = await createKeyAdmin(a).issue({ name: `svc ${i}`, scopes: [] });
        await b.verify(key); // cached on B
        const started = performance.now();
        await createKeyAdmin(a).revoke(record.id);
        samples.push(performance.now() - started);
        await expect(b.verify(key)).rejects.toMatchObject({ reason: 'revoked' });
      }
      expect(warnings).toEqual([]);
      samples.sort((x, y) => x - y);
      console.info(`[measured] Redis Cluster SPUBLISH revoke(), 2 instances, 3 masters: median ${samples[2]!.toFixed(1)} ms, max ${samples[4]!.toFixed(1)} ms`);
    } finally {
      await Promise.all(buses.map((bus) => bus.close()));
    }
  });

  it('refuses sharded: true without sharded commands', async () => {
    const keyring = { onChange: () => () => undefined, invalidate: () => undefined };
    const plain = { publish: async () => 0 };
    const subscriber = { subscribe: async () => 0, unsubscribe: async () => 0, on: () => undefined, off: () => undefined };
    expect(() => createRevocationBus({ publisher: plain, subscriber, keyring, sharded: true })).toThrow(/spublish/);
  });
});
