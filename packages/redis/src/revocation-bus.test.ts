import {
  ConfigError,
  createApiKeyGuard,
  createKeyAdmin,
  createKeyring,
  createMemoryAuditStore,
  createMemoryKeyStore,
  createOwnerAdmin,
  createRateLimiter,
  isKeysetError,
  type DecisionEvent,
  type Keyring,
  type KeyStore,
} from '@keyset/core';
import { redisUrl } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRevocationBus, type RevocableKeyring, type RevocationBus } from './index.ts';

const url = await redisUrl();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(address: string): Promise<Redis> {
  const redis = new Redis(address, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** One "instance": its own two connections and its own keyring over the shared key store. */
interface Instance {
  keyring: Keyring;
  /** The keyring as the bus sees it, recording when and what it was told to invalidate. */
  observed: RevocableKeyring & { invalidations: { id: string; at: number }[] };
  publisher: Redis;
  subscriber: Redis;
  bus: RevocationBus;
}

describe.skipIf(url === undefined)('createRevocationBus (real Redis pub/sub)', () => {
  const channel = `keyset:test:revocations:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const connections: Redis[] = [];
  const buses: RevocationBus[] = [];
  let store: KeyStore;

  async function instance(options: { publishOnChange?: boolean } = {}): Promise<Instance> {
    const keyring = createKeyring({ store, prefix: 'test', lastUsed: false, cache: { ttlMs: 60_000 } });
    const invalidations: { id: string; at: number }[] = [];
    const observed = {
      invalidations,
      onChange: keyring.onChange.bind(keyring),
      invalidate(id: string): void {
        invalidations.push({ id, at: performance.now() });
        keyring.invalidate(id);
      },
    };
    const publisher = await connect(url as string);
    const subscriber = await connect(url as string);
    connections.push(publisher, subscriber);
    const bus = createRevocationBus({ publisher, subscriber, keyring: observed, channel, ...options });
    buses.push(bus);
    await bus.ready;
    return { keyring, observed, publisher, subscriber, bus };
  }

  beforeAll(() => {
    store = createMemoryKeyStore();
  });

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  afterAll(() => {
    for (const connection of connections) connection.disconnect();
  });

  it('evicts a key revoked on instance A from instance B before A’s revoke() resolves (measured)', async () => {
    const a = await instance();
    const b = await instance();
    const withoutBus = createKeyring({ store, prefix: 'test', lastUsed: false, cache: { ttlMs: 60_000 } });
    const samples: number[] = [];
    for (let round = 0; round < 20; round++) {
      const { key, record } = await createKeyAdmin(a.keyring).issue({ name: `round ${round}`, scopes: ['orders:read'] });
      // Both B and a keyring without a bus now hold the key in their verification cache.
      expect((await b.keyring.verify(key)).id).toBe(record.id);
      expect((await withoutBus.verify(key)).id).toBe(record.id);
      const started = performance.now();
      await createKeyAdmin(a.keyring).revoke(record.id);
      // Acknowledged eviction: by the time A's revoke() resolves, B has already evicted.
      const seen = b.observed.invalidations.find((i) => i.id === record.id);
      expect(seen, `B had not evicted ${record.id} when A's revoke() resolved`).toBeDefined();
      samples.push(seen!.at - started);
      // B refuses the key at once; the keyring without a bus still trusts its cache.
      const refused = await b.keyring.verify(key).catch((error: unknown) => error);
      expect(isKeysetError(refused) && refused.code).toBe('invalid_api_key');
      expect((await withoutBus.verify(key)).id).toBe(record.id);
    }
    samples.sort((x, y) => x - y);
    const median = samples[Math.floor(samples.length / 2)]!;
    const max = samples[samples.length - 1]!;
    console.info(`[measured] revocation propagation A → B (from the revoke() call): median ${median.toFixed(2)} ms, max ${max.toFixed(2)} ms over ${samples.length} rounds`);
    // A's own messages come back to A's subscriber too, and are ignored.
    expect(a.observed.invalidations).toEqual([]);
  });

  it('switching limits between observe and enforce on instance A reaches B before the admin call returns, with an audit entry each time', async () => {
    const audit = createMemoryAuditStore();
    const shared = createMemoryKeyStore({ audit });
    const instanceOn = async (): Promise<{ keyring: Keyring; bus: RevocationBus }> => {
      const keyring = createKeyring({ store: shared, prefix: 'test', lastUsed: false, cache: { ttlMs: 60_000 } });
      const publisher = await connect(url as string);
      const subscriber = await connect(url as string);
      connections.push(publisher, subscriber);
      const bus = createRevocationBus({ publisher, subscriber, keyring, channel });
      buses.push(bus);
      await bus.ready;
      return { keyring, bus };
    };
    const a = await instanceOn();
    const b = await instanceOn();
    await createOwnerAdmin(a.keyring).create({ id: 'cus_shadow', quota: { remaining: 3 } });
    const trial = { name: 'trial', limit: 1, windowSeconds: 3600 };
    const { key, record } = await createKeyAdmin(a.keyring).issue({ name: 'shadowed', scopes: ['orders:read'], ownerId: 'cus_shadow', rateLimits: [trial] });
    const events: DecisionEvent[] = [];
    const guardB = createApiKeyGuard({ keyring: b.keyring, limiter: createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 1 }, onDecision: (e) => void events.push(e), logger: { warn() {} } }) });
    const onB = () =>
      guardB.check({ authorization: `ApiKey ${key}`, url: '/orders' }, { scopes: ['orders:read'] }).then(
        () => 'served',
        (error: unknown) => (isKeysetError(error) ? error.code : 'error'),
      );
    // B caches the key with its limit enforced: the second request is over it.
    expect([await onB(), await onB()]).toEqual(['served', 'rate_limited']);
    // Observed from A: B serves the very next request, counted as a would-be refusal.
    await createKeyAdmin(a.keyring).updateLimits(record.id, { rateLimits: [{ ...trial, mode: 'observe' }] });
    expect(await onB()).toBe('served');
    expect(events.at(-1)).toMatchObject({ outcome: 'would_refuse', reason: 'rate_limited', policy: 'trial' });
    // The owner's quota (3 credits: the served requests spent two) runs out, is observed, then enforced again.
    await createKeyAdmin(a.keyring).updateLimits(record.id, { rateLimits: null });
    expect([await onB(), await onB()]).toEqual(['served', 'quota_exhausted']);
    await createOwnerAdmin(a.keyring).update('cus_shadow', { quotaMode: 'observe' });
    expect(await onB()).toBe('served');
    expect(events.at(-1)).toMatchObject({ outcome: 'would_refuse', reason: 'quota_exhausted', policy: 'owner.quota' });
    await createOwnerAdmin(a.keyring).update('cus_shadow', { quotaMode: 'enforce' });
    // Enforced again, the count went on where it was (the switch did not refill it).
    expect(await onB()).toBe('quota_exhausted');
    const { entries } = await audit.list({ take: 20 });
    const switches = entries.filter((e) => e.action === 'key.limits_updated' || e.action === 'owner.updated').map((e) => e.action);
    expect(switches.sort()).toEqual(['key.limits_updated', 'key.limits_updated', 'owner.updated', 'owner.updated']);
  });

  it('waits at most ackTimeoutMs for a subscriber that never confirms, then warns', async () => {
    const warnings: Record<string, unknown>[] = [];
    const keyring = createKeyring({ store, prefix: 'test', lastUsed: false });
    const admin = createKeyAdmin(keyring);
    const publisher = await connect(url as string);
    const subscriber = await connect(url as string);
    const silent = await connect(url as string); // subscribed, but no bus behind it: never acknowledges
    connections.push(publisher, subscriber, silent);
    await silent.subscribe(channel);
    const b = await instance();
    const bus = createRevocationBus({
      publisher,
      subscriber,
      keyring,
      channel,
      ackTimeoutMs: 150,
      logger: { warn: (details) => warnings.push(details) },
    });
    buses.push(bus);
    await bus.ready;
    const { record } = await admin.issue({ name: 'slow fleet', scopes: ['orders:read'] });
    const started = performance.now();
    await admin.revoke(record.id);
    const waited = performance.now() - started;
    // It waited for the acknowledgement that never came, then gave up (a bus that waited
    // for ever would fail this test by its timeout; no wall-clock budget beyond that).
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(b.observed.invalidations.map((i) => i.id)).toEqual([record.id]);
    expect(warnings).toEqual([{ type: 'revoked', id: record.id, instances: 2, unacknowledged: 1 }]);
    await silent.unsubscribe(channel);
  });

  it('subscribes once a connection created a moment ago is ready (enableOfflineQueue: false, redis.duplicate())', async () => {
    // The documented set-up: the subscriber is still connecting (or not yet, with
    // lazyConnect) when the bus is created, and ioredis rejects commands until it is ready.
    for (const lazyConnect of [false, true]) {
      const base = new Redis(url as string, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect });
      const subscriber = base.duplicate();
      for (const c of [base, subscriber]) c.on('error', () => undefined);
      connections.push(base, subscriber);
      const invalidated: string[] = [];
      const bus = createRevocationBus({
        publisher: base,
        subscriber,
        keyring: { onChange: () => () => undefined, invalidate: (id) => invalidated.push(id) },
        channel,
      });
      buses.push(bus);
      await expect(bus.ready).resolves.toBeUndefined();
      const other = await instance();
      await other.bus.publish({ type: 'revoked', id: `key_fresh_${String(lazyConnect)}` });
      expect(invalidated).toEqual([`key_fresh_${String(lazyConnect)}`]);
    }
  });

  it('does not resolve publish() early when its own subscriber is not subscribed (e.g. reconnecting)', async () => {
    const warnings: Record<string, unknown>[] = [];
    const publisher = await connect(url as string);
    const subscriber = await connect(url as string);
    connections.push(publisher, subscriber);
    const bus = createRevocationBus({
      publisher,
      subscriber,
      keyring: { onChange: () => () => undefined, invalidate: () => undefined },
      channel,
      ackTimeoutMs: 150,
      logger: { warn: (details) => warnings.push(details) },
    });
    buses.push(bus);
    await bus.ready;
    const b = await instance();
    await subscriber.unsubscribe(channel); // PUBLISH now counts B only, and no acknowledgement can reach us
    const started = performance.now();
    await bus.publish({ type: 'revoked', id: 'key_unconfirmed' });
    const waited = performance.now() - started;
    // Before: PUBLISH said 1 receiver, the bus took it for itself and resolved at once, silently.
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(warnings).toEqual([{ type: 'revoked', id: 'key_unconfirmed', instances: 1, unacknowledged: 1, subscribed: false }]);
    expect(b.observed.invalidations.map((i) => i.id)).toEqual(['key_unconfirmed']);
  });

  it('drops every cached key when its subscriber connection drops and again once it listens anew (missed messages)', async () => {
    const warnings: string[] = [];
    const keyring = createKeyring({ store, prefix: 'test', lastUsed: false, cache: { ttlMs: 60_000 } });
    const admin = createKeyAdmin(keyring);
    let flushes = 0;
    let onFlush: (() => void) | undefined;
    const observed: RevocableKeyring = {
      onChange: keyring.onChange.bind(keyring),
      invalidate: (id) => keyring.invalidate(id),
      invalidateAll(): void {
        flushes++;
        keyring.invalidateAll();
        onFlush?.();
      },
    };
    const publisher = await connect(url as string);
    const subscriber = await connect(url as string);
    connections.push(publisher, subscriber);
    const subscriberId = await subscriber.client('ID');
    const bus = createRevocationBus({ publisher, subscriber, keyring: observed, channel, logger: { warn: (_details, message) => warnings.push(message) } });
    buses.push(bus);
    await bus.ready;
    const { key, record } = await admin.issue({ name: 'cached', scopes: [] });
    await keyring.verify(key); // cached on this instance for 60 s
    // Revoked elsewhere while this instance's message never arrives (it was disconnected at that moment).
    const elsewhere = createKeyring({ store, prefix: 'test', lastUsed: false });
    await createKeyAdmin(elsewhere).revoke(record.id);
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id }); // the stale cache, before the drop
    const listeningAgain = new Promise<void>((resolve) => {
      onFlush = () => flushes >= 2 && resolve();
    });
    await publisher.client('KILL', 'ID', String(subscriberId));
    await listeningAgain;
    await expect(keyring.verify(key)).rejects.toMatchObject({ code: 'invalid_api_key', reason: 'revoked' });
    expect(warnings).toEqual([expect.stringContaining('lost its subscriber connection'), expect.stringContaining('listens again')]);
    // And it listens again: a revocation published now reaches it.
    const other = await instance();
    const { key: second, record: secondRecord } = await admin.issue({ name: 'second', scopes: [] });
    await keyring.verify(second);
    await createKeyAdmin(other.keyring).revoke(secondRecord.id);
    await expect(keyring.verify(second)).rejects.toMatchObject({ code: 'invalid_api_key', reason: 'revoked' });
  });

  it('carries rotations too', async () => {
    const a = await instance();
    const b = await instance();
    const { record } = await createKeyAdmin(a.keyring).issue({ name: 'rotating', scopes: ['orders:read'] });
    await createKeyAdmin(a.keyring).rotate(record.id, { overlapSeconds: 0 });
    await sleep(50);
    expect(b.observed.invalidations.map((i) => i.id)).toEqual([record.id]);
  });

  it('ignores junk on the channel and honours a well-formed message from another instance', async () => {
    const b = await instance();
    const raw = connections[0]!;
    const junk = [
      'not json',
      '[]',
      'null',
      JSON.stringify({ v: 1, origin: 'x', type: 'deleted', id: 'key_1' }),
      JSON.stringify({ v: 2, origin: 'x', type: 'revoked', id: 'key_1' }),
      JSON.stringify({ v: 1, origin: 'x', type: 'revoked' }),
      JSON.stringify({ v: 1, origin: 'x', type: 'revoked', id: '' }),
      JSON.stringify({ v: 1, origin: 'x', type: 'revoked', id: 'k'.repeat(257) }),
      JSON.stringify({ v: 1, origin: 'x', type: 'revoked', id: 42 }),
      JSON.stringify({ v: 1, type: 'revoked', id: 'key_1' }),
    ];
    for (const message of junk) await raw.publish(channel, message);
    await raw.publish(`${channel}:other`, JSON.stringify({ v: 1, origin: 'x', type: 'revoked', id: 'key_other' }));
    await raw.publish(channel, JSON.stringify({ v: 1, origin: 'elsewhere', type: 'revoked', id: 'key_good' }));
    await sleep(50);
    expect(b.observed.invalidations.map((i) => i.id)).toEqual(['key_good']);
  });

  it('publishes on demand with publishOnChange: false, and stops on close()', async () => {
    const a = await instance({ publishOnChange: false });
    const b = await instance();
    const { record } = await createKeyAdmin(a.keyring).issue({ name: 'manual', scopes: ['orders:read'] });
    await createKeyAdmin(a.keyring).revoke(record.id);
    await sleep(50);
    expect(b.observed.invalidations).toEqual([]);
    await a.bus.publish({ type: 'revoked', id: record.id });
    await sleep(50);
    expect(b.observed.invalidations.map((i) => i.id)).toEqual([record.id]);
    await b.bus.close();
    await a.bus.publish({ type: 'revoked', id: 'key_after_close' });
    await sleep(50);
    expect(b.observed.invalidations).toHaveLength(1);
    await expect(a.bus.publish({ type: 'deleted', id: 'x' } as never)).rejects.toBeInstanceOf(ConfigError);
  });

  it('lets revoke() succeed and logs when the PUBLISH fails', async () => {
    const warnings: string[] = [];
    const keyring = createKeyring({ store, prefix: 'test', lastUsed: false });
    const admin = createKeyAdmin(keyring);
    const publisher = await connect(url as string);
    const subscriber = await connect(url as string);
    connections.push(publisher, subscriber);
    const bus = createRevocationBus({
      publisher,
      subscriber,
      keyring,
      channel,
      logger: { warn: (_details, message) => warnings.push(message) },
    });
    buses.push(bus);
    await bus.ready;
    publisher.disconnect(); // enableOfflineQueue: false → PUBLISH fails at once
    const { record } = await admin.issue({ name: 'lonely', scopes: ['orders:read'] });
    await admin.revoke(record.id);
    expect(warnings).toEqual(['could not publish a keyring change; other instances keep their cache until its TTL']);
  });

  it('refuses bad options with a ConfigError', async () => {
    const redis = await connect(url as string);
    connections.push(redis);
    const keyring = createKeyring({ store, prefix: 'test', lastUsed: false });
    expect(() => createRevocationBus({ publisher: redis, subscriber: redis, keyring })).toThrow(ConfigError);
    expect(() => createRevocationBus({ publisher: redis, subscriber: {} as never, keyring })).toThrow(ConfigError);
    expect(() => createRevocationBus({ publisher: redis, subscriber: redis, keyring: {} as never })).toThrow(ConfigError);
    expect(() => createRevocationBus({ publisher: {} as never, subscriber: redis, keyring })).toThrow(ConfigError);
    const other = await connect(url as string);
    connections.push(other);
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      // 0 or NaN made every PUBLISH "time out" at once: revocations silently never propagated.
      expect(() => createRevocationBus({ publisher: redis, subscriber: other, keyring, timeoutMs })).toThrow(ConfigError);
    }
  });
});
