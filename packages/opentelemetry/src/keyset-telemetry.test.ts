/**
 * The telemetry wrappers over a real guard (memory stores, real keyring and limiter) and
 * the real OpenTelemetry SDK: the counters equal the decisions the guard made, the lease
 * gauge follows `release()`, store calls are timed and become child spans of `keyset.check`,
 * and only a server's failure marks a span as failed.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import {
  createApiKeyGuard,
  createConcurrencyLimit,
  createKeyAdmin,
  createOwnerAdmin,
  createKeyring,
  createMemoryKeyStore,
  createMemoryRateLimitStore,
  createMemoryUsageStore,
  createRateLimiter,
  createUsageCounter,
  isKeysetError,
  type DecisionEvent,
  type KeyStore,
} from '@keyset/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeysetTelemetry } from './index.ts';
import { createTestTelemetry, type TestTelemetry } from './telemetry.test-support.ts';

const URL_ = 'https://api.test/api/orders';
const ROUTE = { scopes: ['orders:read'], route: 'GET /api/orders' } as const;

let open: TestTelemetry | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function setup(options: { ownerAttribute?: boolean; cache?: false | { ttlMs: number } } = {}) {
  const t = (open = createTestTelemetry({ ...(options.ownerAttribute === undefined ? {} : { ownerAttribute: options.ownerAttribute }) }));
  const { telemetry } = t;
  let down = false;
  const memory = createMemoryKeyStore();
  // A key store that can go down, as a database does: the guard answers 503 then.
  const failing = Object.fromEntries(
    Object.entries(memory).map(([name, fn]) => [name, async (...args: unknown[]) => {
      if (down && name === 'findByDigest') throw new Error('ECONNREFUSED 127.0.0.1:5432');
      return (fn as (...a: unknown[]) => unknown)(...args);
    }]),
  ) as unknown as KeyStore;
  const keyring = createKeyring({ store: telemetry.store('keys', failing), prefix: 'acme_live', lastUsed: false, cache: options.cache ?? false, onCacheLookup: telemetry.onCacheLookup });
  const events: DecisionEvent[] = [];
  const limiter = createRateLimiter({
    defaultPolicy: { limit: 3, windowSeconds: 60 },
    store: telemetry.store('ratelimit', createMemoryRateLimitStore()),
    onDecision: telemetry.onDecision((event) => void events.push(event)),
    logger: { warn() {} },
  });
  const concurrency = createConcurrencyLimit({ max: 1 });
  const guard = telemetry.guard(createApiKeyGuard({ keyring: telemetry.keyring(keyring), limiter, concurrency }));
  const admin = createKeyAdmin(keyring);
  const owners = createOwnerAdmin(keyring);
  const reader = await admin.issue({ name: 'reader', scopes: ['orders:read'] });
  const check = (key: string | undefined, route = ROUTE) =>
    guard.check({ authorization: key === undefined ? undefined : `ApiKey ${key}`, url: URL_ }, route).then(
      (result) => ({ outcome: 'allowed', result }),
      (error: unknown) => ({ outcome: isKeysetError(error) ? error.code : 'error', result: undefined }),
    );
  return { t, admin, owners, reader, check, events, setDown: (value: boolean) => (down = value) };
}

describe('createKeysetTelemetry: metrics', () => {
  it('counts every guard decision by outcome and route, exactly as the guard answered', async () => {
    const { t, reader, check } = await setup();
    const outcomes: string[] = [];
    const first = await check(reader.key); // allowed, holds the one lease
    outcomes.push(first.outcome);
    outcomes.push((await check(reader.key)).outcome); // concurrency_limited
    first.result!.release!();
    outcomes.push((await check(reader.key)).outcome); // allowed (rate limit: 3 spent)
    outcomes.push((await check(reader.key)).outcome); // rate_limited
    outcomes.push((await check(undefined)).outcome); // missing_api_key
    outcomes.push((await check('acme_live_notakeyatall0000000000000000000')).outcome); // invalid_api_key
    outcomes.push((await check(reader.key, { scopes: ['keys:admin'], route: 'POST /api/keys' } as never)).outcome); // insufficient_scope → rate_limited once spent
    expect(outcomes).toEqual(['allowed', 'concurrency_limited', 'allowed', 'rate_limited', 'missing_api_key', 'invalid_api_key', 'rate_limited']);

    const counted: Record<string, number> = {};
    for (const outcome of new Set(outcomes)) counted[outcome] = await t.sum('keyset.decisions', { 'keyset.outcome': outcome });
    expect(counted).toEqual({ allowed: 2, concurrency_limited: 1, rate_limited: 2, missing_api_key: 1, invalid_api_key: 1 });
    expect(await t.sum('keyset.decisions')).toBe(outcomes.length);
    expect(await t.sum('keyset.decisions', { 'http.route': '/api/orders', 'http.request.method': 'GET' })).toBe(6);
    expect(await t.sum('keyset.decisions', { 'http.route': '/api/keys', 'http.request.method': 'POST' })).toBe(1);
    expect(await t.count('keyset.check.duration')).toBe(outcomes.length);
  });

  it('holds one in-flight lease per admitted request until release(), however often release() is called', async () => {
    const { t, admin, check } = await setup();
    const other = await admin.issue({ name: 'other', scopes: ['orders:read'] });
    const [a, b] = [await check((await admin.issue({ name: 'a', scopes: ['orders:read'] })).key), await check(other.key)];
    expect(await t.sum('keyset.leases.in_flight')).toBe(2);
    a.result!.release!();
    a.result!.release!();
    expect(await t.sum('keyset.leases.in_flight')).toBe(1);
    b.result!.release!();
    expect(await t.sum('keyset.leases.in_flight')).toBe(0);
  });

  it('times key verification by outcome and store calls by store and operation, and counts store failures', async () => {
    const { t, reader, check, setDown } = await setup();
    (await check(reader.key)).result!.release!();
    await check('acme_live_notakeyatall0000000000000000000');
    setDown(true);
    expect((await check(reader.key)).outcome).toBe('unavailable');
    expect(await t.count('keyset.key.verification.duration', { 'keyset.outcome': 'valid' })).toBe(1);
    expect(await t.count('keyset.key.verification.duration', { 'keyset.outcome': 'invalid_api_key' })).toBe(1);
    expect(await t.count('keyset.key.verification.duration', { 'keyset.outcome': 'unavailable' })).toBe(1);
    expect(await t.count('keyset.store.duration', { 'keyset.store': 'keys', 'keyset.store.operation': 'findByDigest' })).toBe(2);
    expect(await t.sum('keyset.store.failures', { 'keyset.store': 'keys', 'keyset.store.operation': 'findByDigest', 'error.type': 'Error' })).toBe(1);
    expect(await t.count('keyset.store.duration', { 'keyset.store': 'ratelimit' })).toBeGreaterThan(0);
  });

  it("counts the keyring's cache lookups by result", async () => {
    const { t, reader, check } = await setup({ cache: { ttlMs: 60_000 } });
    for (let i = 0; i < 3; i++) (await check(reader.key)).result?.release?.();
    await check('acme_live_notakeyatall0000000000000000000'); // bad checksum: no lookup
    expect(await t.sum('keyset.key.cache.lookups', { 'keyset.cache.result': 'miss' })).toBe(1);
    expect(await t.sum('keyset.key.cache.lookups', { 'keyset.cache.result': 'hit' })).toBe(2);
    expect(await t.sum('keyset.key.cache.lookups')).toBe(3);
    expect(await t.count('keyset.store.duration', { 'keyset.store.operation': 'findByDigest' })).toBe(1);
  });

  it('records the usage counter\'s flush lag by result and its dropped counts', async () => {
    const t = (open = createTestTelemetry());
    let failing = false;
    const inner = createMemoryUsageStore();
    const store = { ...inner, add: async (deltas: Parameters<typeof inner.add>[0]) => (failing ? Promise.reject(new Error('database down')) : inner.add(deltas)) };
    const usage = createUsageCounter({ store, flushIntervalMs: 3_600_000, pruneIntervalMs: false, maxPendingKeys: 2, logger: { warn() {} }, onFlush: t.telemetry.onUsageFlush });
    const decision = (keyId: string): DecisionEvent => ({ keyId, outcome: 'allowed', policy: 'default', cost: 0, remaining: 0 });
    for (const key of ['a', 'b', 'c']) usage.record(decision(key));
    failing = true;
    await usage.flush().catch(() => {});
    failing = false;
    await usage.flush();
    expect(await t.count('keyset.usage.flush.lag', { 'keyset.flush.result': 'failed' })).toBe(1);
    expect(await t.count('keyset.usage.flush.lag', { 'keyset.flush.result': 'ok' })).toBe(1);
    expect(await t.sum('keyset.usage.dropped')).toBe(1);
    await usage.close();
  });

  it("counts the limiter's decisions through onDecision, and passes each event on", async () => {
    const { t, reader, check, events } = await setup();
    for (let i = 0; i < 4; i++) (await check(reader.key)).result?.release?.();
    expect(events.map((e) => e.outcome)).toEqual(['allowed', 'allowed', 'allowed', 'rate_limited']);
    expect(await t.sum('keyset.limiter.decisions', { 'keyset.outcome': 'allowed', 'http.route': '/api/orders' })).toBe(3);
    expect(await t.sum('keyset.limiter.decisions', { 'keyset.outcome': 'rate_limited' })).toBe(1);
  });

  it('counts a request an observed (shadow) limit would refuse as would_refuse, by reason, in both decision counters', async () => {
    const { t, admin, check, events } = await setup();
    const trial = await admin.issue({ name: 'trial', scopes: ['orders:read'], rateLimits: [{ name: 'trial', limit: 2, windowSeconds: 60, mode: 'observe' }], quota: { remaining: 3, mode: 'observe' } });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { outcome, result } = await check(trial.key);
      outcomes.push(outcome);
      result?.release?.();
    }
    // Served every time; the third and later would be refused by the observed rate limit.
    expect(outcomes).toEqual(['allowed', 'allowed', 'allowed', 'allowed', 'allowed']);
    expect(events.map((e) => (e.outcome === 'would_refuse' ? `would_refuse:${e.reason}:${e.policy}` : e.outcome))).toEqual([
      'allowed',
      'allowed',
      'would_refuse:rate_limited:trial',
      'would_refuse:rate_limited:trial',
      'would_refuse:rate_limited:trial',
    ]);
    for (const name of ['keyset.decisions', 'keyset.limiter.decisions']) {
      expect(await t.sum(name, { 'keyset.outcome': 'allowed' })).toBe(2);
      expect(await t.sum(name, { 'keyset.outcome': 'would_refuse', 'keyset.would_refuse.reason': 'rate_limited', 'http.route': '/api/orders' })).toBe(3);
    }
    // The observed quota was spent by the two requests the observed rate limit admitted, and
    // not reached by the others (an enforced rate limit's refusal spends no credit either).
    expect(events.map((e) => e.quotaRemaining)).toEqual([2, 1, undefined, undefined, undefined]);
  });

  it('records the revocation bus lag of each publish other instances received, by change and by whether all confirmed', async () => {
    const t = (open = createTestTelemetry());
    t.telemetry.onRevocationPublished({ type: 'revoked', lagMs: 3, instances: 2, unacknowledged: 0 });
    t.telemetry.onRevocationPublished({ type: 'updated', lagMs: 250, instances: 2, unacknowledged: 1 });
    // Alone on the bus: nothing to measure.
    t.telemetry.onRevocationPublished({ type: 'revoked', lagMs: 1, instances: 0, unacknowledged: 0 });
    expect(await t.count('keyset.revocation.lag', { 'keyset.revocation.type': 'revoked', 'keyset.revocation.result': 'acknowledged' })).toBe(1);
    expect(await t.count('keyset.revocation.lag', { 'keyset.revocation.type': 'updated', 'keyset.revocation.result': 'timed_out' })).toBe(1);
    expect(await t.count('keyset.revocation.lag')).toBe(2);
  });

  it('adds the owner only when asked to', async () => {
    for (const ownerAttribute of [false, true]) {
      const { t, admin, owners, check } = await setup({ ownerAttribute });
      await owners.create({ id: 'acme' });
      const owned = await admin.issue({ name: 'owned', scopes: ['orders:read'], ownerId: 'acme' });
      (await check(owned.key)).result!.release!();
      expect(await t.sum('keyset.decisions', { 'keyset.owner.id': 'acme' })).toBe(ownerAttribute ? 1 : 0);
      expect(await t.sum('keyset.limiter.decisions', { 'keyset.owner.id': 'acme' })).toBe(ownerAttribute ? 1 : 0);
      await t.close();
      open = undefined;
    }
  });
});

describe('createKeysetTelemetry: spans', () => {
  it('one keyset.check span per check, with the store calls as its children', async () => {
    const { t, reader, check } = await setup();
    (await check(reader.key)).result!.release!();
    const spans = t.spans();
    const root = spans.find((s) => s.name === 'keyset.check');
    expect(root).toBeDefined();
    expect(root!.parentSpanContext).toBeUndefined();
    expect(root!.attributes).toMatchObject({ 'keyset.outcome': 'allowed', 'http.route': '/api/orders', 'http.request.method': 'GET' });
    expect(root!.status.code).toBe(SpanStatusCode.UNSET);
    const children = spans.filter((s) => s.parentSpanContext?.spanId === root!.spanContext().spanId).map((s) => s.name);
    expect(children).toContain('keys findByDigest');
    expect(children.some((name) => name.startsWith('ratelimit '))).toBe(true);
    const trace = spans.filter((s) => s.spanContext().traceId === root!.spanContext().traceId);
    expect(trace.every((s) => s === root || s.parentSpanContext?.spanId === root!.spanContext().spanId)).toBe(true);
  });

  it('marks the span as failed for a 5xx-class failure only, never for a refusal', async () => {
    const { t, reader, check, setDown } = await setup();
    await check(undefined);
    await check(reader.key, { scopes: ['keys:admin'], route: 'POST /api/keys' } as never);
    setDown(true);
    await check(reader.key);
    const checks = t.spans().filter((s) => s.name === 'keyset.check');
    expect(checks.map((s) => [s.attributes['keyset.outcome'], s.status.code])).toEqual([
      ['missing_api_key', SpanStatusCode.UNSET],
      ['insufficient_scope', SpanStatusCode.UNSET],
      ['unavailable', SpanStatusCode.ERROR],
    ]);
    const failedLookup = t.spans().find((s) => s.name === 'keys findByDigest' && s.status.code === SpanStatusCode.ERROR);
    expect(failedLookup?.attributes['error.type']).toBe('Error');
  });
});

describe('createKeysetTelemetry: nothing to record', () => {
  it('without a meter or a tracer, every wrapper hands back what it was given', () => {
    const telemetry = createKeysetTelemetry();
    const guard = createApiKeyGuard({ keyring: createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', lastUsed: false }) });
    const store = createMemoryRateLimitStore();
    expect(telemetry.guard(guard)).toBe(guard);
    expect(telemetry.store('ratelimit', store)).toBe(store);
  });

  it('a synchronous store method stays synchronous, and a getter reads the store each time', () => {
    const t = (open = createTestTelemetry());
    let size = 1;
    const memory = {
      now: () => 42,
      get size() {
        return size;
      },
    };
    const wrapped = t.telemetry.store('clock', memory);
    expect(wrapped.now()).toBe(42);
    size = 2;
    expect(wrapped.size).toBe(2);
  });
});
