/**
 * Every key-related row of the error catalogue (docs/errors.md), through the guard adapters call, mapped with
 * `toProblem` as adapters do. The store is a real memory store behind a counting wrapper.
 */
import { describe, expect, it } from 'vitest';
import { rejection } from '@keyset/test-support';
import { ConfigError, toProblem } from '../errors.ts';
import { createMemoryRateLimitStore } from '../rate-limit/memory-store.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import type { RateLimitStore } from '../rate-limit/types.ts';
import { apiKeyCheckOptions, createApiKeyGuard } from './api-key-guard.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const PREFIX = 'acme_live';
const T0 = Date.UTC(2025, 0, 1);
const URL_ = 'https://api.test/api/orders?limit=5';

function countingStore(inner: KeyStore = createMemoryKeyStore()) {
  const calls: string[] = [];
  let down = false;
  const store = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(inner)) {
    store[name] = async (...args: unknown[]) => {
      calls.push(name);
      if (down) throw new Error('ECONNREFUSED 127.0.0.1:5432');
      return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    };
  }
  return { store: store as unknown as KeyStore, calls, setDown: (v: boolean) => (down = v) };
}

async function setup() {
  let now = T0;
  const { store, calls, setDown } = countingStore();
  const keyring = createKeyring({ store, prefix: PREFIX, clock: () => now, lastUsed: false });
  const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, clock: () => now, logger: { warn() {} } });
  const guard = createApiKeyGuard({ keyring, limiter, realm: 'orders' });
  const reader = await createKeyAdmin(keyring).issue({ name: 'reader', scopes: ['orders:read'], rateLimit: { limit: 2, windowSeconds: 60 } });
  const lookups = () => calls.filter((c) => c === 'findByDigest').length;
  return { keyring, guard, reader, lookups, setDown, advance: (ms: number) => (now += ms) };
}

async function problemOf(promise: Promise<unknown>) {
  return toProblem(await rejection(promise));
}

describe('createApiKeyGuard: the error catalogue rows', () => {
  it('200: a valid key with the scope passes and gets RateLimit headers of its identity', async () => {
    const { guard, reader } = await setup();
    const { key, headers } = await guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ }, { scopes: ['orders:read'] });
    expect(key).toMatchObject({ id: reader.record.id, name: 'reader', scopes: ['orders:read'], last4: reader.key.slice(-4) });
    expect(headers['ratelimit-policy']).toMatch(/q=2/);
    expect(headers.ratelimit).toMatch(/r=1/);
  });

  it('401 missing_api_key: no header, with the WWW-Authenticate challenge', async () => {
    const { guard, lookups } = await setup();
    for (const authorization of [undefined, null, '']) {
      const p = await problemOf(guard.check({ authorization, url: URL_ }));
      expect([p.status, p.body.code]).toEqual([401, 'missing_api_key']);
      expect(p.headers['www-authenticate']).toBe('ApiKey realm="orders"');
    }
    expect(lookups()).toBe(0);
  });

  it('401 unsupported_auth_scheme: another scheme (Bearer), even carrying a valid key (authorization-scheme.test.ts)', async () => {
    const { guard, reader } = await setup();
    const p = await problemOf(guard.check({ authorization: `Bearer ${reader.key}`, url: URL_ }));
    expect([p.status, p.body.code, p.headers['www-authenticate']]).toEqual([401, 'unsupported_auth_scheme', 'ApiKey realm="orders"']);
  });

  it('the scheme is case-insensitive and may be followed by several spaces', async () => {
    const { guard, reader } = await setup();
    await expect(guard.check({ authorization: `apikey ${reader.key}`, url: URL_ })).resolves.toBeDefined();
    await expect(guard.check({ authorization: `APIKEY    ${reader.key}  `, url: URL_ })).resolves.toBeDefined();
  });

  it('401 invalid_api_key (malformed): ApiKey scheme with a non-key, no store access', async () => {
    const { guard, lookups } = await setup();
    for (const authorization of ['ApiKey', 'ApiKey not-a-key', 'ApiKey acme_test_0123456789abcdefghijABCDEFGHIJ000000']) {
      const p = await problemOf(guard.check({ authorization, url: URL_ }));
      expect([p.status, p.body.code, p.headers['www-authenticate']]).toEqual([401, 'invalid_api_key', 'ApiKey realm="orders"']);
    }
    expect(lookups()).toBe(0);
  });

  it('401 invalid_api_key (checksum): a one-character typo never reaches the store', async () => {
    const { guard, reader, lookups } = await setup();
    const i = PREFIX.length + 5;
    const typo = reader.key.slice(0, i) + (reader.key[i] === 'Q' ? 'R' : 'Q') + reader.key.slice(i + 1);
    let reason: unknown;
    const p = await problemOf(guard.check({ authorization: `ApiKey ${typo}`, url: URL_ }).catch((e) => ((reason = e.reason), Promise.reject(e))));
    expect([p.status, p.body.code, reason]).toEqual([401, 'invalid_api_key', 'checksum']);
    expect(lookups()).toBe(0);
  });

  it('401 invalid_api_key for unknown, expired and revoked keys; the reason is not in the body', async () => {
    const { guard, keyring, advance } = await setup();
    const admin = createKeyAdmin(keyring);
    const stranger = await createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false })).issue({ name: 'x', scopes: [] });
    const expiring = await admin.issue({ name: 'e', scopes: ['orders:read'], expiresAt: new Date(T0 + 1000) });
    const revoked = await admin.issue({ name: 'r', scopes: ['orders:read'] });
    await admin.revoke(revoked.record.id);
    advance(1000);
    const reasons: unknown[] = [];
    for (const key of [stranger.key, expiring.key, revoked.key]) {
      const p = await problemOf(guard.check({ authorization: `ApiKey ${key}`, url: URL_ }).catch((e) => (reasons.push(e.reason), Promise.reject(e))));
      expect([p.status, p.body.code]).toEqual([401, 'invalid_api_key']);
      expect(JSON.stringify(p.body)).not.toMatch(/unknown|expired|revoked/);
    }
    expect(reasons).toEqual(['unknown', 'expired', 'revoked']);
  });

  it('403 insufficient_scope with the missing_scopes member', async () => {
    const { guard, reader } = await setup();
    const p = await problemOf(guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ }, { scopes: ['orders:read', 'reports:read'] }));
    expect([p.status, p.body.code, p.body.missing_scopes]).toEqual([403, 'insufficient_scope', ['reports:read']]);
  });

  it('403 insufficient_scope is counted against the rate limit and carries the RateLimit headers', async () => {
    const { guard, reader } = await setup(); // reader: 2 per 60 s
    const authorization = `ApiKey ${reader.key}`;
    const first = await problemOf(guard.check({ authorization, url: URL_ }, { scopes: ['reports:read'] }));
    expect([first.status, first.body.code, first.body.missing_scopes]).toEqual([403, 'insufficient_scope', ['reports:read']]);
    expect(first.headers).toMatchObject({ 'ratelimit-policy': '"default";q=2;w=60', ratelimit: '"default";r=1;t=30' });
    const second = await problemOf(guard.check({ authorization, url: URL_ }, { scopes: ['keys:admin'] }));
    expect([second.status, second.headers.ratelimit]).toEqual([403, '"default";r=0;t=60']);
    // Probing scopes spent the budget: the next request is refused for its rate, whatever it asks.
    const probe = await problemOf(guard.check({ authorization, url: URL_ }, { scopes: ['reports:read'] }));
    expect([probe.status, probe.body.code, probe.headers['retry-after']]).toEqual([429, 'rate_limited', '30']);
    expect(probe.body.missing_scopes).toBeUndefined(); // an exhausted key learns nothing about scopes
    const allowed = await problemOf(guard.check({ authorization, url: URL_ }, { scopes: ['orders:read'] }));
    expect([allowed.status, allowed.body.code]).toEqual([429, 'rate_limited']);
  });

  it('400 api_key_in_query, checked first: even with a valid header, by name or by value', async () => {
    const { guard, reader, lookups } = await setup();
    const authorization = `ApiKey ${reader.key}`;
    for (const url of [
      `https://api.test/api/orders?api_key=${reader.key}`,
      'https://api.test/api/orders?limit=5&Api-Key=anything',
      '/api/orders?access_token=x',
      `/api/orders?limit=5&token=${reader.key}`,
    ]) {
      const p = await problemOf(guard.check({ authorization, url }, { scopes: ['orders:read'] }));
      expect([p.status, p.body.code]).toEqual([400, 'api_key_in_query']);
      expect(JSON.stringify(p)).not.toContain(reader.key.slice(-8));
    }
    // Before anything else: no header needed, no store lookup made.
    const bare = await problemOf(guard.check({ authorization: undefined, url: `/api/orders?apikey=${reader.key}` }));
    expect(bare.body.code).toBe('api_key_in_query');
    expect(lookups()).toBe(0);
  });

  it('429 rate_limited from the identity policy, shared by both secrets of a rotation', async () => {
    const { guard, keyring, reader } = await setup();
    const rotated = await createKeyAdmin(keyring).rotate(reader.record.id, { overlapSeconds: 3600 });
    await guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ });
    await guard.check({ authorization: `ApiKey ${rotated.key}`, url: URL_ });
    const p = await problemOf(guard.check({ authorization: `ApiKey ${rotated.key}`, url: URL_ }));
    expect([p.status, p.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(p.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('503 unavailable when the key store is down (fail closed), never a 401 or 500', async () => {
    const { guard, reader, setDown } = await setup();
    setDown(true);
    const p = await problemOf(guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ }));
    expect([p.status, p.body.code]).toEqual([503, 'unavailable']);
    expect(JSON.stringify(p.body)).not.toContain('ECONNREFUSED');
  });

  it('503 unavailable from a rate-limit store that is down with onStoreError: closed', async () => {
    const { keyring, reader } = await setup();
    const broken: RateLimitStore = {
      decide() {
        throw new Error('redis down');
      },
    };
    const limiter = createRateLimiter({ store: broken, defaultPolicy: { limit: 5, windowSeconds: 1 }, onStoreError: 'closed', logger: { warn() {} } });
    const guard = createApiKeyGuard({ keyring, limiter });
    const p = await problemOf(guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ }));
    expect([p.status, p.body.code]).toEqual([503, 'unavailable']);
  });

  it('without a limiter, passes with no headers; keys without their own limit use the default', async () => {
    const { keyring, reader } = await setup();
    await expect(createApiKeyGuard({ keyring }).check({ authorization: `ApiKey ${reader.key}`, url: URL_ })).resolves.toMatchObject({ headers: {} });
    const plain = await createKeyAdmin(keyring).issue({ name: 'p', scopes: [] });
    const limiter = createRateLimiter({ store: createMemoryRateLimitStore(), defaultPolicy: { limit: 7, windowSeconds: 60 }, logger: { warn() {} } });
    const { headers } = await createApiKeyGuard({ keyring, limiter }).check({ authorization: `ApiKey ${plain.key}`, url: URL_ });
    expect(headers['ratelimit-policy']).toMatch(/q=7/);
  });

  it('validates its options', () => {
    expect(() => createApiKeyGuard({ keyring: {} as never })).toThrow(ConfigError);
  });
});

describe('forwarded headers', () => {
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false });

  it('without trustProxy, X-Forwarded-For never changes the client address', async () => {
    const { key } = await createKeyAdmin(keyring).issue({ name: 'any', scopes: [] });
    const guard = createApiKeyGuard({ keyring });
    const base = { authorization: `ApiKey ${key}`, url: URL_, remoteAddress: '192.0.2.1' };
    const plain = await guard.check({ ...base, forwardedFor: undefined });
    const forwarded = await guard.check({ ...base, forwardedFor: '198.51.100.7, 203.0.113.9' });
    expect(forwarded.clientAddress).toBe(plain.clientAddress);
    expect(plain.clientAddress).toBe('192.0.2.1');
  });
});

describe('a 403 for a missing scope, as the limiter hears it', () => {
  it('is reported as insufficient_scope on its route, counts against the rate limit, and spends no quota credit', async () => {
    const events: DecisionEvent[] = [];
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false });
    const limiter = createRateLimiter({ defaultPolicy: { limit: 2, windowSeconds: 60 }, onDecision: (event) => void events.push(event), logger: { warn() {} } });
    const guard = createApiKeyGuard({ keyring, limiter, refusedCredentials: false });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'metered', scopes: ['orders:read'], quota: { remaining: 5, refill: null } });
    const request = { authorization: `ApiKey ${key}`, url: URL_ };
    expect((await problemOf(guard.check(request, { scopes: ['reports:read'], route: 'GET /reports', cost: 3 }))).body).toMatchObject({ code: 'insufficient_scope' });
    expect(events).toEqual([expect.objectContaining({ outcome: 'insufficient_scope', route: 'GET /reports', cost: 0 })]);
    // The refusal spent one of the two requests a minute and none of the five credits.
    await guard.check(request, { scopes: ['orders:read'], route: 'GET /orders' });
    expect(events[1]).toMatchObject({ outcome: 'allowed', route: 'GET /orders', cost: 1, quotaRemaining: 4 });
    expect((await problemOf(guard.check(request, { scopes: ['orders:read'] }))).body).toMatchObject({ code: 'rate_limited' });
  });
});

describe('a guard without a limiter', () => {
  it('admits with an empty header record, as the result type promises (adapters iterate it)', async () => {
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false });
    const guard = createApiKeyGuard({ keyring, refusedCredentials: false });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'plain', scopes: ['orders:read'] });
    const result = await guard.check({ authorization: `ApiKey ${key}`, url: URL_ }, { scopes: ['orders:read'] });
    expect(result.headers).toEqual({});
    expect(Object.entries(result.headers)).toEqual([]);
  });
});

describe('createApiKeyGuard: permission queries', () => {
  const orQuery = { or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] } as const;

  it('admits a key that satisfies either branch of an `or`', async () => {
    const { keyring, guard } = await setup();
    const admin = await createKeyAdmin(keyring).issue({ name: 'admin', scopes: ['orders:admin', 'reports:read'] });
    const { key } = await guard.check({ authorization: `ApiKey ${admin.key}`, url: URL_ }, apiKeyCheckOptions({ permissions: orQuery }));
    expect(key.name).toBe('admin');
  });

  it('refuses with 403 insufficient_scope naming the smallest set that would satisfy the query', async () => {
    const { keyring, guard } = await setup();
    const half = await createKeyAdmin(keyring).issue({ name: 'half', scopes: ['orders:admin'] });
    const p = await problemOf(guard.check({ authorization: `ApiKey ${half.key}`, url: URL_ }, apiKeyCheckOptions({ permissions: orQuery })));
    expect([p.status, p.body.code, p.body.missing_scopes]).toEqual([403, 'insufficient_scope', ['orders:read']]);
  });

  it('requires `scopes` and `permissions` both, and names what is missing of each', async () => {
    const { guard, reader } = await setup();
    const route = apiKeyCheckOptions({ scopes: ['orders:read', 'billing:read'], permissions: { and: ['reports:read'] } });
    const p = await problemOf(guard.check({ authorization: `ApiKey ${reader.key}`, url: URL_ }, route));
    expect(p.body.missing_scopes).toEqual(['billing:read', 'reports:read']);
  });

  it('refuses a malformed query when the route is made, not on a request', () => {
    expect(() => apiKeyCheckOptions({ permissions: { or: [] } })).toThrow(ConfigError);
    expect(() => apiKeyCheckOptions({ permissions: { xor: ['a:b'] } as never })).toThrow(/permissions/);
  });
});
