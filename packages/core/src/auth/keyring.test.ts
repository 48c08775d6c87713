import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { webCrypto } from '../crypto/crypto.web.ts';
import { AuthenticationError, ConfigError, KeysetError } from '../errors.ts';
import { createPaginator } from '../pagination/paginator.ts';
import type { CursorPage } from '../pagination/types.ts';
import { digestKey } from '../keys/key-digest.ts';
import { keyListSort } from '../admin/key-list-sort.ts';
import type { KeyRecord } from '../keys/key-record.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring, type KeyringOptions } from './keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const PREFIX = 'acme_test';
const T0 = Date.UTC(2025, 0, 1);

/** A real memory store behind a wrapper that counts calls and can fail or stall them. */
function instrumentedStore(inner: KeyStore = createMemoryKeyStore()) {
  const calls: Record<string, number> = {};
  const failing = new Set<string>();
  const gates = new Map<string, Promise<void>>();
  const store = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(inner)) {
    store[name] = async (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      if (failing.has(name)) throw new Error(`connection refused (${name})`);
      const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      await gates.get(name);
      return result;
    };
  }
  return { store: store as unknown as KeyStore, calls, failing, gates };
}

function setup(options: Partial<KeyringOptions> = {}) {
  const kit = instrumentedStore();
  let now = T0;
  const clock = { now: () => now, set: (ms: number) => (now = ms), advance: (ms: number) => (now += ms) };
  const warnings: Record<string, unknown>[] = [];
  const errors: Record<string, unknown>[] = [];
  const logger = { warn: (f: Record<string, unknown>) => void warnings.push(f), error: (f: Record<string, unknown>) => void errors.push(f) };
  const keyring = createKeyring({ store: kit.store, prefix: PREFIX, clock: () => now, logger, lastUsed: false, ...options });
  return { ...kit, keyring, clock, warnings, errors };
}

/** A refusal: an `AuthenticationError` (its `reason`, `last4`) or another `KeysetError` (a 503 of the store). */
const rejection = async (promise: Promise<unknown>): Promise<AuthenticationError & KeysetError> => (await rejectionOf(promise, KeysetError)) as AuthenticationError;

afterEach(() => {
  vi.useRealTimers();
});

describe('createKeyring options', () => {
  const store = createMemoryKeyStore();
  it.each<[string, Partial<KeyringOptions>, RegExp]>([
    ['bad prefix', { prefix: 'Acme-Live' }, /prefix must match/],
    ['short pepper', { pepper: 'short' }, /pepper must be/],
    ['negative ttl', { cache: { ttlMs: -1 } }, /cache.ttlMs/],
    ['fractional max', { cache: { max: 1.5 } }, /cache.max/],
    ['zero interval', { lastUsed: { intervalMs: 0 } }, /lastUsed.intervalMs/],
    ['incomplete store', { store: { findByDigest: async () => undefined } as unknown as KeyStore }, /insertIdentity/],
  ])('throws a ConfigError for %s', (_, override, message) => {
    expect(() => createKeyring({ store, prefix: PREFIX, ...override })).toThrow(message);
    expect(() => createKeyring({ store, prefix: PREFIX, ...override })).toThrow(ConfigError);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(createKeyring({ store, prefix: PREFIX }))).toBe(true);
  });

  it('hands its parts to the admin factories through parts(), and carries nothing under a symbol', async () => {
    const keyring = createKeyring({ store, prefix: PREFIX });
    expect(Object.getOwnPropertySymbols(keyring)).toEqual([]);
    const parts = keyring.parts();
    expect(parts.config.store).toBe(store);
    expect(Object.isFrozen(parts)).toBe(true);
    // The admin works on these very parts: a key it revokes is evicted from this keyring's cache.
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'ci', scopes: [] });
    expect((await keyring.verify(key)).id).toBe(record.id);
    await admin.revoke(record.id);
    await expect(keyring.verify(key)).rejects.toThrow(AuthenticationError);
    // A keyring logged or serialised shows its options, never its store.
    expect(JSON.stringify(keyring)).not.toContain('insertIdentity');
    expect(Object.keys(keyring)).not.toContain('config');
  });

  it('refuses to administer anything but a keyring from createKeyring', () => {
    const lookalike = { prefix: PREFIX, verify: async () => ({}) } as unknown as ReturnType<typeof createKeyring>;
    expect(() => createKeyAdmin(lookalike)).toThrow(/createKeyAdmin needs a keyring made by createKeyring/);
  });
});

describe('issue and get', () => {
  it('issues a key of the prefix whose record holds no secret material', async () => {
    const { keyring, store } = setup();
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'billing', scopes: ['orders:read', 'orders:read', 'reports:read'], rateLimit: { limit: 10, windowSeconds: 60 } });
    expect(key).toMatch(/^acme_test_[0-9A-Za-z]{38}$/);
    expect(record.id).toMatch(/^key_[0-9A-Za-z]{22}$/);
    expect(record).toMatchObject({ name: 'billing', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 10, windowSeconds: 60 }, environment: PREFIX, metadata: {}, ipAllowlist: null, createdAt: new Date(T0), lastUsedAt: null, expiresAt: null, revokedAt: null });
    expect(record.secrets).toEqual([expect.objectContaining({ last4: key.slice(-4), createdAt: new Date(T0), lastUsedAt: null, expiresAt: null })]);
    expect(JSON.parse(JSON.stringify(record))).toEqual({
      id: record.id, name: 'billing', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 10, windowSeconds: 60 },
      environment: PREFIX, metadata: {}, ipAllowlist: null,
      rateLimits: [{ limit: 10, windowSeconds: 60 }], quota: null, ownerId: null, leakedAt: null, leakUrl: null,
      createdAt: '2025-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
      secrets: [{ last4: key.slice(-4), createdAt: '2025-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null }],
    });
    // Only the digest reaches the store.
    const stored = await store.getIdentity(record.id);
    expect(stored?.secrets[0]?.digest).toBe(await digestKey(key));
    expect(JSON.stringify(stored)).not.toContain(key.slice(PREFIX.length + 1, PREFIX.length + 10));
    expect(await admin.get(record.id)).toEqual(record);
  });

  it('keeps data properties enumerable so `{ key, ...record }` serialises both', async () => {
    const { keyring } = setup();
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    const body = JSON.parse(JSON.stringify({ key, ...record }));
    expect(body.key).toBe(key);
    expect(body.id).toBe(record.id);
    expect(body.createdAt).toBe('2025-01-01T00:00:00.000Z');
  });

  it.each<[string, object]>([
    ['name', { name: '', scopes: [] }],
    ['name', { name: 'a\nb', scopes: [] }],
    ['scopes', { name: 'n', scopes: ['has space'] }],
    ['scopes', { name: 'n', scopes: 'orders:read' }],
    ['rateLimit', { name: 'n', scopes: [], rateLimit: { limit: 0, windowSeconds: 60 } }],
    ['rateLimit', { name: 'n', scopes: [], rateLimit: { limit: 5 } }],
    // Key limits are exactly the policies the limiter accepts: whole-second windows, and
    // no interval finer than a microsecond (the limiter would otherwise silently fall back).
    ['rateLimit', { name: 'n', scopes: [], rateLimit: { limit: 1, windowSeconds: 0.5 } }],
    ['rateLimit', { name: 'n', scopes: [], rateLimit: { limit: 10_000_000, windowSeconds: 1 } }],
    ['expiresAt', { name: 'n', scopes: [], expiresAt: 'tomorrow' }],
    ['expiresAt', { name: 'n', scopes: [], expiresAt: new Date(T0 - 1) }],
    // What no store can hold (the database refused these with a 503 before).
    ['expiresAt', { name: 'n', scopes: [], expiresAt: '9999-12-31T23:59:59-23:59' }],
    ['expiresAt', { name: 'n', scopes: [], expiresAt: new Date(Date.UTC(10000, 0, 1)) }],
    ['expiresAt', { name: 'n', scopes: [], expiresAt: new Date(8.64e15) }],
    ['name', { name: 'a\u0000b', scopes: [] }],
    ['name', { name: 'a\ud800b', scopes: [] }],
    ['name', { name: '\udc00', scopes: [] }],
    ['rateLimit.limit', { name: 'n', scopes: [], rateLimit: { limit: 2_147_483_648, windowSeconds: 86_400 } }],
    ['rateLimits[1].limit', { name: 'n', scopes: [], rateLimits: [{ name: 'a', limit: 1, windowSeconds: 1 }, { name: 'b', limit: 3e9, windowSeconds: 86_400 }] }],
  ])('refuses a bad %s with invalid_request naming it', async (field, input) => {
    const { keyring, calls } = setup();
    const err = await rejection(createKeyAdmin(keyring).issue(input as never));
    expect(err).toBeInstanceOf(KeysetError);
    expect(err.code).toBe('invalid_request');
    expect(err.extensions.field).toBe(field);
    expect(calls.insertIdentity).toBeUndefined();
  });

  it('accepts the largest values every store holds: the end of year 9999 UTC, 2^31 − 1 per window, astral names', async () => {
    const { keyring } = setup();
    const { record } = await createKeyAdmin(keyring).issue({
      name: '\ud83d\udd11 billing',
      scopes: [],
      expiresAt: '9999-12-31T23:59:59.999Z',
      rateLimit: { limit: 2_147_483_647, windowSeconds: 86_400 },
    });
    expect(record.expiresAt?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    expect(record.rateLimit).toEqual({ limit: 2_147_483_647, windowSeconds: 86_400 });
  });

  it('get: not_found for unknown and malformed ids (the latter without a store call)', async () => {
    const { keyring, calls } = setup();
    const admin = createKeyAdmin(keyring);
    expect((await rejection(admin.get('key_0000000000000000000000'))).code).toBe('not_found');
    expect(calls.getIdentity).toBe(1);
    expect((await rejection(admin.get("key_'; drop table"))).code).toBe('not_found');
    expect(calls.getIdentity).toBe(1);
  });

  it('maps a store failure to 503 unavailable with the store error as cause', async () => {
    const { keyring, failing, errors } = setup();
    failing.add('insertIdentity');
    const err = await rejection(createKeyAdmin(keyring).issue({ name: 'n', scopes: [] }));
    expect(err.code).toBe('unavailable');
    expect(err.status).toBe(503);
    expect((err.cause as Error).message).toMatch(/connection refused/);
    expect(errors).toHaveLength(1);
  });
});

describe('verify', () => {
  it('accepts an issued key and returns a frozen, log-safe VerifiedKey', async () => {
    const { keyring } = setup();
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'svc', scopes: ['a'] });
    const verified = await keyring.verify(key);
    const expected = { id: record.id, name: 'svc', scopes: ['a'], rateLimit: null, environment: PREFIX, metadata: {}, ipAllowlist: null, rateLimits: null, quota: null, ownerId: null, owner: null, last4: key.slice(-4) };
    expect(verified).toEqual(expected);
    expect(Object.isFrozen(verified)).toBe(true);
    expect(JSON.stringify(verified)).toBe(JSON.stringify(expected));
    expect(inspect(verified)).toContain('VerifiedKey');
  });

  it('refuses malformed and bad-checksum keys without touching the store', async () => {
    const { keyring, calls, warnings } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    const typo = key.slice(0, 15) + (key[15] === 'a' ? 'b' : 'a') + key.slice(16);
    const malformed = await rejection(keyring.verify(`${key}x`));
    const checksum = await rejection(keyring.verify(typo));
    expect([malformed.code, malformed.reason]).toEqual(['invalid_api_key', 'malformed']);
    expect([checksum.code, checksum.reason]).toEqual(['invalid_api_key', 'checksum']);
    expect(calls.findByDigest).toBeUndefined();
    expect(warnings).toEqual([
      { reason: 'malformed', last4: `${key}x`.slice(-4) },
      { reason: 'checksum', last4: typo.slice(-4) },
    ]);
  });

  it('refuses a typo of a cached key as a bad checksum, with a synchronous or an asynchronous digest', async () => {
    // With node:crypto the valid-result cache is asked before the checksum (a hit proves
    // the text); a miss must still be refused for its checksum, never sent to the store.
    for (const crypto of [undefined, webCrypto]) {
      const { keyring, calls, warnings } = setup(crypto === undefined ? {} : { crypto });
      const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
      await keyring.verify(key);
      const typo = key.slice(0, 15) + (key[15] === 'a' ? 'b' : 'a') + key.slice(16);
      for (let i = 0; i < 2; i++) {
        const checksum = await rejection(keyring.verify(typo));
        expect([checksum.code, checksum.reason, checksum.last4]).toEqual(['invalid_api_key', 'checksum', typo.slice(-4)]);
      }
      expect((await rejection(keyring.verify(`${key.slice(0, -1)}!`))).reason).toBe('malformed');
      expect(await keyring.verify(key)).toMatchObject({ last4: key.slice(-4) });
      expect(calls.findByDigest).toBe(1);
      expect(warnings.map((w) => w.reason)).toEqual(['checksum', 'checksum', 'malformed']);
    }
  });

  it('refuses an unknown key, and remembers it for negativeTtlMs only', async () => {
    const { keyring, calls, clock } = setup();
    const { keyring: other } = setup();
    const { key } = await createKeyAdmin(other).issue({ name: 'elsewhere', scopes: [] });
    expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
    expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
    expect(calls.findByDigest).toBe(1);
    clock.advance(5_000);
    expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
    expect(calls.findByDigest).toBe(2);
  });

  it('serves valid keys from the cache for ttlMs, then asks the store again', async () => {
    const { keyring, calls, clock } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    for (let i = 0; i < 50; i++) await keyring.verify(key);
    expect(calls.findByDigest).toBe(1);
    clock.advance(29_999);
    await keyring.verify(key);
    expect(calls.findByDigest).toBe(1);
    clock.advance(1);
    await keyring.verify(key);
    expect(calls.findByDigest).toBe(2);
  });

  it('asks the store every time with cache: false', async () => {
    const { keyring, calls } = setup({ cache: false });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    await keyring.verify(key);
    expect(calls.findByDigest).toBe(2);
  });

  it('keeps memory flat under a flood of unknown keys and never evicts valid ones for them', async () => {
    const { keyring, calls } = setup({ cache: { max: 10, negativeMax: 5 } });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    const { keyring: other } = setup();
    for (let i = 0; i < 20; i++) {
      const { key: stranger } = await createKeyAdmin(other).issue({ name: `s${i}`, scopes: [] });
      await rejection(keyring.verify(stranger));
    }
    const before = calls.findByDigest;
    await keyring.verify(key);
    expect(calls.findByDigest).toBe(before);
  });

  it('fails closed with 503 when the store is down, and recovers', async () => {
    const { keyring, failing } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    failing.add('findByDigest');
    const err = await rejection(keyring.verify(key));
    expect(err.code).toBe('unavailable');
    expect(err.status).toBe(503);
    expect(err.cause).toBeInstanceOf(Error);
    failing.delete('findByDigest');
    await expect(keyring.verify(key)).resolves.toMatchObject({ name: 'n' });
  });

  it('refuses a key after its identity expiresAt, even while cached', async () => {
    const { keyring, clock, calls } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [], expiresAt: new Date(T0 + 10_000).toISOString() });
    await keyring.verify(key);
    clock.set(T0 + 9_999);
    await keyring.verify(key);
    clock.set(T0 + 10_000);
    const err = await rejection(keyring.verify(key));
    expect(err.reason).toBe('expired');
    expect(calls.findByDigest).toBe(1);
  });

  it('works with an asynchronous (Web Crypto) provider and a pepper', async () => {
    const pepper = 'pepper-pepper-pepper-pepper';
    const { keyring, store } = setup({ crypto: webCrypto, pepper });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id });
    const stored = await store.getIdentity(record.id);
    expect(stored?.secrets[0]?.digest).toBe(await digestKey(key, { pepper }));
    expect(stored?.secrets[0]?.digest).not.toBe(await digestKey(key));
    // Another pepper on the same store knows no key.
    const otherPepper = createKeyring({ store, prefix: PREFIX, pepper: 'another-pepper-another', lastUsed: false });
    expect((await rejection(otherPepper.verify(key))).reason).toBe('unknown');
  });

  it('treats a store row whose digest differs from the computed one as unknown', async () => {
    const { keyring: issuer, store } = setup();
    const { key } = await createKeyAdmin(issuer).issue({ name: 'n', scopes: [] });
    const { key: otherKey } = await createKeyAdmin(issuer).issue({ name: 'other', scopes: [] });
    // A store that matches loosely (think case-insensitive collation): answers every
    // lookup with another key's real row.
    const otherRow = await store.findByDigest(await digestKey(otherKey));
    const loose: KeyStore = { ...createMemoryKeyStore(), findByDigest: async () => otherRow };
    const keyring = createKeyring({ store: loose, prefix: PREFIX, lastUsed: false });
    expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
  });
});

describe('rotation and revocation', () => {
  it('accepts old and new keys inside the overlap, only the new one after', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const { key: oldKey, record } = await admin.issue({ name: 'n', scopes: [] });
    clock.advance(1_000);
    const { key: newKey, record: rotated } = await admin.rotate(record.id, { overlapSeconds: 60 });
    expect(newKey).not.toBe(oldKey);
    expect(rotated.id).toBe(record.id);
    expect(rotated.secrets.map((s) => [s.last4, s.expiresAt?.getTime() ?? null])).toEqual([
      [newKey.slice(-4), null],
      [oldKey.slice(-4), T0 + 61_000],
    ]);
    expect(await admin.get(record.id)).toEqual(rotated);
    clock.advance(59_999);
    await expect(keyring.verify(oldKey)).resolves.toMatchObject({ id: record.id, last4: oldKey.slice(-4) });
    await expect(keyring.verify(newKey)).resolves.toMatchObject({ id: record.id, last4: newKey.slice(-4) });
    clock.advance(1);
    expect((await rejection(keyring.verify(oldKey))).reason).toBe('expired');
    await expect(keyring.verify(newKey)).resolves.toMatchObject({ id: record.id });
  });

  it('overlap 0 replaces the old key at once, even when it was cached', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const { key: oldKey, record } = await admin.issue({ name: 'n', scopes: [] });
    await keyring.verify(oldKey);
    const { key: newKey } = await admin.rotate(record.id, { overlapSeconds: 0 });
    expect((await rejection(keyring.verify(oldKey))).reason).toBe('expired');
    await expect(keyring.verify(newKey)).resolves.toMatchObject({ id: record.id });
  });

  it('a cached positive entry stops working exactly at the secret expiry, with no store call', async () => {
    const { keyring, clock, calls } = setup();
    const admin = createKeyAdmin(keyring);
    const { key: oldKey, record } = await admin.issue({ name: 'n', scopes: [] });
    await admin.rotate(record.id, { overlapSeconds: 10 });
    await keyring.verify(oldKey); // cached with the overlap end as its validity
    const lookups = calls.findByDigest;
    clock.advance(9_999);
    await keyring.verify(oldKey);
    clock.advance(1);
    expect((await rejection(keyring.verify(oldKey))).reason).toBe('expired');
    expect(calls.findByDigest).toBe(lookups);
  });

  it('never lengthens a secret past its own expiry', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const { record } = await admin.issue({ name: 'n', scopes: [] });
    await admin.rotate(record.id, { overlapSeconds: 10 });
    clock.advance(1_000);
    const { record: again } = await admin.rotate(record.id, { overlapSeconds: 3600 });
    // The first secret, older than the one being replaced, ends at the second rotation
    // (T0 + 1 s, before its own T0 + 10 s): never later than it already did.
    expect(again.secrets.map((s) => s.expiresAt?.getTime() ?? null)).toEqual([null, T0 + 1_000 + 3_600_000, T0 + 1_000]);
    expect(await admin.get(record.id)).toEqual(again);
  });

  it('rotating twice inside the overlap refuses the oldest key at once; the previous one verifies until its overlap ends', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const { key: original, record } = await admin.issue({ name: 'n', scopes: [] });
    clock.advance(1_000);
    const { key: previous } = await admin.rotate(record.id, { overlapSeconds: 3600 });
    // All three are cached as valid, the original with its one-hour overlap end.
    await expect(keyring.verify(original)).resolves.toMatchObject({ id: record.id });
    await expect(keyring.verify(previous)).resolves.toMatchObject({ id: record.id });

    clock.advance(1_000);
    const { key: newest, record: rotated } = await admin.rotate(record.id, { overlapSeconds: 60 });
    expect(rotated.secrets.map((s) => [s.last4, s.expiresAt?.getTime() ?? null])).toEqual([
      [newest.slice(-4), null],
      [previous.slice(-4), T0 + 2_000 + 60_000],
      [original.slice(-4), T0 + 2_000],
    ]);
    expect(await admin.get(record.id)).toEqual(rotated);

    // Right after the second rotation: the original is refused, even though it was cached.
    expect((await rejection(keyring.verify(original))).reason).toBe('expired');
    await expect(keyring.verify(previous)).resolves.toMatchObject({ id: record.id, last4: previous.slice(-4) });
    await expect(keyring.verify(newest)).resolves.toMatchObject({ id: record.id, last4: newest.slice(-4) });

    clock.advance(59_999);
    expect((await rejection(keyring.verify(original))).reason).toBe('expired');
    await expect(keyring.verify(previous)).resolves.toMatchObject({ id: record.id });
    clock.advance(1);
    expect((await rejection(keyring.verify(previous))).reason).toBe('expired');
    await expect(keyring.verify(newest)).resolves.toMatchObject({ id: record.id });
  });

  it('revoke ends every secret at once and evicts cached entries before it resolves', async () => {
    const { keyring, warnings } = setup();
    const admin = createKeyAdmin(keyring);
    const { key: a, record } = await admin.issue({ name: 'n', scopes: [] });
    const { key: b } = await admin.rotate(record.id, { overlapSeconds: 3600 });
    await keyring.verify(a);
    await keyring.verify(b);
    const events: unknown[] = [];
    keyring.onChange((e) => void events.push(e));
    await admin.revoke(record.id);
    expect(events).toEqual([{ type: 'revoked', id: record.id }]);
    for (const key of [a, b]) {
      const err = await rejection(keyring.verify(key));
      expect([err.code, err.reason]).toEqual(['invalid_api_key', 'revoked']);
    }
    expect(warnings.at(-1)).toEqual({ reason: 'revoked', last4: b.slice(-4), keyId: record.id });
    expect((await admin.get(record.id)).revokedAt).toEqual(new Date(T0));
    await admin.revoke(record.id); // twice is fine
    expect((await rejection(admin.rotate(record.id, { overlapSeconds: 0 }))).code).toBe('invalid_request');
  });

  it('revoke and rotate of an unknown id → not_found; bad overlap → invalid_request', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    expect((await rejection(admin.revoke('key_0000000000000000000000'))).code).toBe('not_found');
    expect((await rejection(admin.rotate('key_0000000000000000000000', { overlapSeconds: 0 }))).code).toBe('not_found');
    const { record } = await admin.issue({ name: 'n', scopes: [] });
    for (const overlapSeconds of [-1, 1.5, Number.NaN, 31 * 86400]) {
      const err = await rejection(admin.rotate(record.id, { overlapSeconds }));
      expect([err.code, err.extensions.field]).toEqual(['invalid_request', 'overlapSeconds']);
    }
  });

  it('awaits change listeners (a revocation bus) and survives one that fails', async () => {
    const { keyring, errors } = setup();
    const admin = createKeyAdmin(keyring);
    const { record } = await admin.issue({ name: 'n', scopes: [] });
    let published = false;
    keyring.onChange(async () => {
      await new Promise((r) => setTimeout(r, 5));
      published = true;
    });
    const off = keyring.onChange(() => {
      throw new Error('bus down');
    });
    await admin.rotate(record.id, { overlapSeconds: 0 });
    expect(published).toBe(true);
    expect(errors).toEqual([expect.objectContaining({ event: 'rotated', keyId: record.id })]);
    off();
    await admin.revoke(record.id);
    expect(errors).toHaveLength(1);
  });

  it('invalidate(id) drops another instance’s cache for that identity (revocation bus)', async () => {
    const shared = createMemoryKeyStore();
    const a = createKeyring({ store: shared, prefix: PREFIX, lastUsed: false });
    const b = createKeyring({ store: shared, prefix: PREFIX, lastUsed: false });
    const { key, record } = await createKeyAdmin(a).issue({ name: 'n', scopes: [] });
    const { key: unrelated } = await createKeyAdmin(a).issue({ name: 'm', scopes: [] });
    await a.verify(key);
    await a.verify(unrelated);
    await createKeyAdmin(b).revoke(record.id);
    // Without the bus, instance a trusts its cache until the TTL ends.
    await expect(a.verify(key)).resolves.toMatchObject({ id: record.id });
    a.invalidate(record.id);
    expect((await rejection(a.verify(key))).reason).toBe('revoked');
    await expect(a.verify(unrelated)).resolves.toMatchObject({ name: 'm' });
  });

  it('invalidateAll() drops every cached result, valid and rejected (a bus that may have missed events)', async () => {
    const shared = createMemoryKeyStore();
    const a = createKeyring({ store: shared, prefix: PREFIX, lastUsed: false });
    const b = createKeyring({ store: shared, prefix: PREFIX, lastUsed: false });
    const { key: first, record: firstRecord } = await createKeyAdmin(a).issue({ name: 'first', scopes: [] });
    const { key: second, record: secondRecord } = await createKeyAdmin(a).issue({ name: 'second', scopes: [] });
    await a.verify(first);
    await a.verify(second);
    await createKeyAdmin(b).revoke(firstRecord.id);
    await createKeyAdmin(b).revoke(secondRecord.id);
    await expect(a.verify(first)).resolves.toMatchObject({ id: firstRecord.id });
    await expect(a.verify(second)).resolves.toMatchObject({ id: secondRecord.id });
    a.invalidateAll();
    expect((await rejection(a.verify(first))).reason).toBe('revoked');
    expect((await rejection(a.verify(second))).reason).toBe('revoked');
  });

  it('does not cache a store answer that raced with a revocation', async () => {
    const { keyring, gates } = setup();
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'n', scopes: [] });
    let release!: () => void;
    gates.set('findByDigest', new Promise<void>((r) => (release = r)));
    const inFlight = keyring.verify(key); // read before the revocation, answered after it
    await new Promise((r) => setTimeout(r, 1));
    gates.delete('findByDigest');
    await admin.revoke(record.id);
    release();
    await expect(inFlight).resolves.toMatchObject({ id: record.id });
    expect((await rejection(keyring.verify(key))).reason).toBe('revoked');
  });
});

describe('authenticate and scopes', () => {
  it('requires every scope and lists the missing ones', async () => {
    const { keyring } = setup();
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: ['orders:read'] });
    const request = { authorization: `ApiKey ${key}`, url: '/api/reports/daily' };
    await expect(keyring.authenticate(request, { scopes: ['orders:read'] })).resolves.toMatchObject({ name: 'n' });
    const err = await rejection(keyring.authenticate(request, { scopes: ['orders:read', 'reports:read', 'keys:admin'] }));
    expect([err.code, err.status]).toEqual(['insufficient_scope', 403]);
    expect(err.extensions).toEqual({ missing_scopes: ['reports:read', 'keys:admin'] });
    expect(err.detail).toContain('reports:read, keys:admin');
  });

  it('treats `*` literally unless scopeWildcards is on', async () => {
    const plain = setup();
    const { key } = await createKeyAdmin(plain.keyring).issue({ name: 'n', scopes: ['orders:*'] });
    const request = { authorization: `ApiKey ${key}`, url: '/' };
    expect((await rejection(plain.keyring.authenticate(request, { scopes: ['orders:read'] }))).code).toBe('insufficient_scope');
    const wild = createKeyring({ store: plain.store, prefix: PREFIX, scopeWildcards: true, lastUsed: false });
    await expect(wild.authenticate(request, { scopes: ['orders:read'] })).resolves.toBeDefined();
    expect((await rejection(wild.authenticate(request, { scopes: ['ordersx:read'] }))).code).toBe('insufficient_scope');
  });

  it('uses the realm given per call, else the keyring realm', async () => {
    const { keyring } = setup({ realm: 'orders' });
    expect((await rejection(keyring.authenticate({ authorization: null, url: '/' }))).headers['www-authenticate']).toBe('ApiKey realm="orders"');
    expect((await rejection(keyring.authenticate({ authorization: null, url: '/' }, { realm: 'admin' }))).headers['www-authenticate']).toBe('ApiKey realm="admin"');
  });
});

describe('list', () => {
  it('walks every key once through a real paginator, newest first', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      if (i % 4 === 0) clock.advance(1_000); // groups with equal createdAt exercise the id tie-breaker
      ids.push((await admin.issue({ name: `k${i}`, scopes: [] })).record.id);
    }
    const paginator = createPaginator<KeyRecord>({ endpoint: 'GET /api/keys', sort: keyListSort, cursor: { secrets: ['x'.repeat(32)] } });
    const seen: string[] = [];
    let query = new URLSearchParams('limit=5');
    for (let pages = 0; pages < 10; pages++) {
      const plan = await paginator.plan(query);
      const { records } = await admin.list(plan);
      const { body } = await paginator.page(plan, records, { url: `https://x.test/api/keys?${query}` });
      seen.push(...body.items.map((r) => r.id));
      const next = 'nextCursor' in body ? body.nextCursor : null;
      if (next === null) break;
      query = new URLSearchParams({ limit: '5', cursor: next });
    }
    const byTime = (id: string) => ids.indexOf(id);
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    // createdAt DESC, id DESC
    const sorted = [...ids].sort((a, b) => Math.floor(byTime(b) / 4) - Math.floor(byTime(a) / 4) || (a < b ? 1 : -1));
    expect(seen).toEqual(sorted);
  });

  it('walks back through prevCursor over the same pages, reversed', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    for (let i = 0; i < 13; i++) {
      if (i % 3 === 0) clock.advance(1_000);
      await admin.issue({ name: `k${i}`, scopes: [] });
    }
    const paginator = createPaginator<KeyRecord>({ endpoint: 'GET /api/keys', sort: keyListSort, cursor: { secrets: ['x'.repeat(32)] } });
    const fetchPage = async (cursor: string | null) => {
      const query = new URLSearchParams(cursor === null ? { limit: '4' } : { limit: '4', cursor });
      const plan = await paginator.plan(query);
      const { body } = await paginator.page(plan, (await admin.list(plan)).records, { url: `https://x.test/api/keys?${query}` });
      return body as CursorPage<KeyRecord>;
    };
    const forward = [await fetchPage(null)];
    while (forward.at(-1)!.nextCursor !== null) forward.push(await fetchPage(forward.at(-1)!.nextCursor));
    expect(forward.map((p) => p.items.length)).toEqual([4, 4, 4, 1]);
    const back: CursorPage<KeyRecord>[] = [];
    for (let cursor = forward.at(-1)!.prevCursor; cursor !== null; cursor = back.at(-1)!.prevCursor) back.push(await fetchPage(cursor));
    const ids = (p: CursorPage<KeyRecord>) => p.items.map((r) => r.id);
    expect(back.map(ids)).toEqual(forward.slice(0, -1).reverse().map(ids));
  });

  it('offset mode returns the total; hasMore reflects the extra row', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    for (let i = 0; i < 7; i++) await admin.issue({ name: `k${i}`, scopes: [] });
    const page = await admin.list({ mode: 'offset', limit: 5, offset: 5 });
    expect(page.records).toHaveLength(2);
    expect(page).toMatchObject({ hasMore: false, total: 7 });
    const first = await admin.list({ mode: 'cursor', limit: 5, after: null });
    expect(first.records).toHaveLength(6);
    expect(first.hasMore).toBe(true);
    const last = first.records[4]!;
    const next = await admin.list({ mode: 'cursor', limit: 5, after: { createdAt: last.createdAt, id: last.id } });
    expect(next.records.map((r) => r.id)).toEqual(first.records.slice(5).map((r) => r.id).concat(next.records.slice(1).map((r) => r.id)));
  });

  it('rejects bad plans', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    expect((await rejection(admin.list({ mode: 'cursor', limit: 0 }))).code).toBe('invalid_request');
    expect((await rejection(admin.list({ mode: 'cursor', limit: 5, after: ['not a time', 'key_x'] }))).code).toBe('invalid_cursor');
    expect((await rejection(admin.list({ mode: 'cursor', limit: 5, after: [Date.UTC(10000, 0, 1), 'key_x'] }))).code).toBe('invalid_cursor');
    expect((await rejection(admin.list({ mode: 'offset', limit: 5, offset: -1 }))).code).toBe('invalid_request');
  });
});

describe('lastUsedAt', () => {
  it('writes one batch per interval: 10k verifications of a key → one write for it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { keyring, calls, store, clock } = setup({ lastUsed: { intervalMs: 60_000 } });
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'n', scopes: [] });
    const { key: other } = await admin.issue({ name: 'm', scopes: [] });
    const touched: { digest: string; at: Date }[][] = [];
    const spy = vi.spyOn(store, 'touchLastUsed');
    for (let i = 0; i < 10_000; i++) {
      clock.advance(1);
      await keyring.verify(key);
    }
    await keyring.verify(other);
    expect(calls.touchLastUsed).toBeUndefined();
    // Readers see the pending time before it is written.
    expect((await admin.get(record.id)).lastUsedAt).toEqual(new Date(T0 + 10_000));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.touchLastUsed).toBe(1);
    for (const call of spy.mock.calls) touched.push([...call[0]]);
    expect(touched[0]).toHaveLength(2);
    expect(touched[0]!.filter((u) => u.digest === (touched[0]![0]!.digest))).toHaveLength(1);
    expect((await admin.get(record.id)).secrets[0]?.lastUsedAt).toEqual(new Date(T0 + 10_000));
    // No use, no write; the next use is written an interval later.
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls.touchLastUsed).toBe(1);
    await keyring.verify(key);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.touchLastUsed).toBe(2);
  });

  it('retries a failed batch at the next interval, logging the failure', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { keyring, calls, failing, errors, store, clock } = setup({ lastUsed: { intervalMs: 1_000 } });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    failing.add('touchLastUsed');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.touchLastUsed).toBe(1);
    expect(errors).toEqual([expect.objectContaining({ count: 1 })]);
    failing.delete('touchLastUsed');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.touchLastUsed).toBe(2);
    expect((await store.getIdentity(record.id))?.secrets[0]?.lastUsedAt).toEqual(new Date(clock.now()));
  });

  it('close() flushes what is pending and stops the timer', async () => {
    const { keyring, calls, store } = setup({ lastUsed: { intervalMs: 60_000 } });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    await keyring.close();
    expect(calls.touchLastUsed).toBe(1);
    expect((await store.getIdentity(record.id))?.secrets[0]?.lastUsedAt).toEqual(new Date(T0));
    await keyring.close();
    expect(calls.touchLastUsed).toBe(1);
  });

  it('close() rejects with 503 when the final write fails', async () => {
    const { keyring, failing } = setup({ lastUsed: { intervalMs: 60_000 } });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    failing.add('touchLastUsed');
    const err = await rejection(keyring.close());
    expect(err.code).toBe('unavailable');
    expect((err.cause as Error).message).toMatch(/connection refused/);
  });
});

describe('a logger that throws', () => {
  const throwing = {
    warn: () => {
      throw new Error('log sink down');
    },
    error: () => {
      throw new Error('log sink down');
    },
  };

  it('never replaces the 400/401/403/503 a client gets (a failing logger is not a 500)', async () => {
    const { keyring, failing } = setup({ logger: throwing });
    const admin = createKeyAdmin(keyring);
    const { key } = await admin.issue({ name: 'n', scopes: [] });
    expect((await rejection(keyring.verify('nope'))).code).toBe('invalid_api_key');
    expect((await rejection(keyring.authenticate({ authorization: `ApiKey ${key}`, url: '/?api_key=x' }))).code).toBe('api_key_in_query');
    expect((await rejection(keyring.authenticate({ authorization: `ApiKey ${key}` }, { scopes: ['orders:read'] }))).code).toBe('insufficient_scope');
    failing.add('findByDigest');
    const { key: other } = await admin.issue({ name: 'm', scopes: [] });
    expect((await rejection(keyring.verify(other))).code).toBe('unavailable');
  });

  it('does not turn a failed lastUsedAt write into a crash or a lost batch', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { keyring, failing, calls, store, clock } = setup({ logger: throwing, lastUsed: { intervalMs: 1_000 } });
      const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
      await keyring.verify(key);
      failing.add('touchLastUsed');
      await vi.advanceTimersByTimeAsync(1_000);
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls.touchLastUsed).toBe(1);
      expect(unhandled).toEqual([]);
      // The batch was kept: close() fails with 503 (not the logger's error), then a later close() writes it.
      expect((await rejection(keyring.close())).code).toBe('unavailable');
      failing.delete('touchLastUsed');
      await keyring.close();
      expect((await store.getIdentity(record.id))?.secrets[0]?.lastUsedAt).toEqual(new Date(clock.now()));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('recordLeak', () => {
  it('sets leakedAt and leakUrl once: a later report changes neither; revoked keys too', async () => {
    const { keyring, clock } = setup();
    const admin = createKeyAdmin(keyring);
    const { record } = await admin.issue({ name: 'ci', scopes: [] });
    await admin.recordLeak(record.id, { url: 'https://github.com/o/r/blob/main/.env' });
    clock.advance(60_000);
    await admin.recordLeak(record.id, { url: 'https://github.com/o/r/issues/2' });
    expect(await admin.get(record.id)).toMatchObject({ leakedAt: new Date(T0), leakUrl: 'https://github.com/o/r/blob/main/.env' });
    const other = (await admin.issue({ name: 'gone', scopes: [] })).record;
    await admin.revoke(other.id);
    await admin.recordLeak(other.id);
    expect(await admin.get(other.id)).toMatchObject({ leakedAt: new Date(T0 + 60_000), leakUrl: null });
  });

  it('refuses a URL that is not http(s), too long or holding key text, and an unknown id', async () => {
    const { keyring } = setup();
    const admin = createKeyAdmin(keyring);
    const { key, record } = await admin.issue({ name: 'ci', scopes: [] });
    for (const url of ['ftp://x/y', 'github.com/o/r', `https://x/${'a'.repeat(2048)}`, `https://github.com/o/r?k=${key}`, 'https://x/\u0000']) {
      const error = await admin.recordLeak(record.id, { url }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeysetError);
      expect(error).toMatchObject({ code: 'invalid_request' });
      expect(JSON.stringify(error)).not.toContain(key.slice(PREFIX.length + 1, PREFIX.length + 12));
    }
    expect(await admin.get(record.id)).toMatchObject({ leakedAt: null, leakUrl: null });
    await expect(admin.recordLeak('key_0000000000000000000000')).rejects.toMatchObject({ code: 'not_found' });
    await expect(admin.recordLeak('nope')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('needs a store with recordLeak', async () => {
    const { recordLeak: _, ...store } = createMemoryKeyStore();
    const admin = createKeyAdmin(createKeyring({ store: store as KeyStore, prefix: PREFIX, lastUsed: false }));
    const { record } = await admin.issue({ name: 'ci', scopes: [] });
    await expect(admin.recordLeak(record.id)).rejects.toThrow(ConfigError);
  });
});
