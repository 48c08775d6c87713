/**
 * Edges of the verification caches and the rejection log: what is cached after a
 * refusal and for how long, that an eviction racing a store answer keeps that answer
 * out of the cache, that a zero-sized or zero-TTL cache holds nothing, and that the
 * "api key rejected" line carries exactly its fields and never key text.
 */
import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { AuthenticationError } from '../errors.ts';
import { digestKey } from '../keys/key-digest.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring, type KeyringOptions } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createOwnerAdmin } from '../admin/owner-admin.ts';

const PREFIX = 'acme_test';
const T0 = Date.UTC(2025, 0, 1);

/** A real memory store behind a wrapper that counts calls and can hold them back. */
function countingStore(inner: KeyStore) {
  const calls: Record<string, number> = {};
  const gates = new Map<string, Promise<void>>();
  const store = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(inner)) {
    store[name] = async (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      await gates.get(name);
      return result;
    };
  }
  return { store: store as unknown as KeyStore, calls, gates };
}

function setup(options: Partial<KeyringOptions> = {}) {
  const memory = createMemoryKeyStore();
  const kit = countingStore(memory);
  let now = T0;
  const clock = { advance: (ms: number) => (now += ms) };
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const logger = { warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }), error: () => {} };
  const keyring = createKeyring({ store: kit.store, prefix: PREFIX, clock: () => now, logger, lastUsed: false, ...options });
  // A second keyring on the same store: another instance, whose changes reach the first
  // one only through invalidate (a revocation bus).
  const other = createKeyring({ store: memory, prefix: PREFIX, clock: () => now, lastUsed: false });
  return { ...kit, memory, keyring, other, clock, lines, keys: createKeyAdmin(keyring), owners: createOwnerAdmin(other), otherKeys: createKeyAdmin(other) };
}

const rejection = (promise: Promise<unknown>): Promise<AuthenticationError> => rejectionOf(promise, AuthenticationError);

/** Lets a held store call start before the test goes on. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('cache sizes: a zero size or TTL caches nothing', () => {
  it.each([
    ['max 0', { max: 0, ttlMs: 30_000 }],
    ['ttlMs 0', { max: 100, ttlMs: 0 }],
  ])('%s: every verification of a valid key asks the store', async (_, cache) => {
    const { keyring, keys, calls } = setup({ cache });
    const { key } = await keys.issue({ name: 'n', scopes: [] });
    await keyring.verify(key);
    await keyring.verify(key);
    await keyring.verify(key);
    expect(calls.findByDigest).toBe(3);
  });

  it.each([
    ['negativeMax 0', { negativeMax: 0, negativeTtlMs: 5_000 }],
    ['negativeTtlMs 0', { negativeMax: 100, negativeTtlMs: 0 }],
  ])('%s: every verification of an unknown key asks the store', async (_, cache) => {
    const { keyring, otherKeys, calls } = setup({ cache });
    const { key, record } = await otherKeys.issue({ name: 'n', scopes: [] });
    await otherKeys.revoke(record.id);
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key: unknown } = await elsewhere.issue({ name: 'u', scopes: [] });
    for (const text of [unknown, unknown, key, key]) await rejection(keyring.verify(text));
    expect(calls.findByDigest).toBe(4);
  });

  it('with no negative cache, a cached key that expires is still refused as expired, and evictions still work', async () => {
    const { keyring, keys, clock } = setup({ cache: { negativeMax: 0 } });
    const { key, record } = await keys.issue({ name: 'n', scopes: [], expiresAt: new Date(T0 + 1_000) });
    await keyring.verify(key);
    clock.advance(1_000);
    expect((await rejection(keyring.verify(key))).reason).toBe('expired');
    keyring.invalidate(record.id);
    keyring.invalidate('owner:cus_1');
    keyring.invalidateAll();
  });

  it('with cache: false, invalidate and invalidateAll are harmless', async () => {
    const { keyring, keys } = setup({ cache: false });
    const { key, record } = await keys.issue({ name: 'n', scopes: [] });
    keyring.invalidate(record.id);
    keyring.invalidate('owner:cus_1');
    keyring.invalidateAll();
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id });
  });
});

describe('negative cache entries: what is remembered, for how long', () => {
  it('a cached key refused at its expiry is remembered as expired for negativeTtlMs, with no store call', async () => {
    const { keyring, keys, clock, calls } = setup({ cache: { negativeTtlMs: 5_000 } });
    const { key, record } = await keys.issue({ name: 'n', scopes: [], expiresAt: new Date(T0 + 1_000) });
    await keyring.verify(key);
    clock.advance(1_000);
    const first = await rejection(keyring.verify(key));
    expect(first).toMatchObject({ reason: 'expired', last4: key.slice(-4) });
    clock.advance(4_999);
    const second = await rejection(keyring.verify(key));
    expect(second).toMatchObject({ reason: 'expired', last4: key.slice(-4) });
    expect(calls.findByDigest).toBe(1);
    clock.advance(1);
    expect((await rejection(keyring.verify(key))).reason).toBe('expired');
    expect(calls.findByDigest).toBe(2);
    expect(record.id).toMatch(/^key_/);
  });

  it('a revoked key is remembered as revoked for negativeTtlMs', async () => {
    const { keyring, keys, clock, calls } = setup();
    const { key, record } = await keys.issue({ name: 'n', scopes: [] });
    await keys.revoke(record.id);
    expect((await rejection(keyring.verify(key))).reason).toBe('revoked');
    clock.advance(4_999);
    expect(await rejection(keyring.verify(key))).toMatchObject({ reason: 'revoked', last4: key.slice(-4) });
    expect(calls.findByDigest).toBe(1);
    clock.advance(1);
    await rejection(keyring.verify(key));
    expect(calls.findByDigest).toBe(2);
  });

  it('an unknown key answered from the negative cache gives the same error: reason and last four only', async () => {
    const { keyring } = setup();
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key } = await elsewhere.issue({ name: 'u', scopes: [] });
    const first = await rejection(keyring.verify(key));
    const second = await rejection(keyring.verify(key));
    for (const error of [first, second]) {
      expect(error).toMatchObject({ reason: 'unknown', last4: key.slice(-4) });
      expect(JSON.stringify(error)).not.toContain(key.slice(0, -4));
    }
  });

  it('a key of a disabled owner is refused as revoked, remembered, and works again once the owner is re-enabled and evicted', async () => {
    const { keyring, keys, owners, calls, clock, lines } = setup();
    await owners.create({ id: 'cus_1' });
    const { key, record } = await keys.issue({ name: 'n', scopes: [], ownerId: 'cus_1' });
    await owners.update('cus_1', { disabled: true });
    const first = await rejection(keyring.verify(key));
    expect(first).toMatchObject({ reason: 'revoked', last4: key.slice(-4) });
    expect(lines.at(-1)).toStrictEqual({ fields: { reason: 'revoked', last4: key.slice(-4), keyId: record.id, owner: 'disabled' }, message: 'api key rejected' });
    clock.advance(4_999);
    expect((await rejection(keyring.verify(key))).reason).toBe('revoked');
    expect(calls.findByDigest).toBe(1);
    await owners.update('cus_1', { disabled: false });
    // The other instance's change reaches this one by identity id: its negative entry goes.
    keyring.invalidate(record.id);
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id });
    expect(calls.findByDigest).toBe(2);
  });

  it('a key whose owner row is gone is refused as revoked, and the log line says deleted', async () => {
    // A store may answer a key whose owner was deleted between its own reads: the owner
    // member is then null, and the key must not pass.
    const memory = createMemoryKeyStore();
    const ownerless: KeyStore = { ...memory, findByDigest: async (digest) => {
      const found = await memory.findByDigest(digest);
      return found === undefined ? undefined : { ...found, owner: null };
    } };
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = { warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }), error: () => {} };
    const issuer = createKeyring({ store: memory, prefix: PREFIX, lastUsed: false });
    await createOwnerAdmin(issuer).create({ id: 'cus_1' });
    const { key, record } = await createKeyAdmin(issuer).issue({ name: 'n', scopes: [], ownerId: 'cus_1' });
    const keyring = createKeyring({ store: ownerless, prefix: PREFIX, lastUsed: false, logger });
    expect(await rejection(keyring.verify(key))).toMatchObject({ reason: 'revoked', last4: key.slice(-4) });
    expect(lines).toStrictEqual([{ fields: { reason: 'revoked', last4: key.slice(-4), keyId: record.id, owner: 'deleted' }, message: 'api key rejected' }]);
  });

  it('a key with no owner is accepted (no owner check without an owner)', async () => {
    const { keyring, keys } = setup();
    const { key, record } = await keys.issue({ name: 'n', scopes: [] });
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id, ownerId: null });
  });
});

describe('evictions', () => {
  it("invalidate('owner:<id>') drops that owner's cached keys, valid and refused, and no one else's", async () => {
    const { keyring, keys, owners, calls } = setup();
    await owners.create({ id: 'cus_1' });
    await owners.create({ id: 'cus_2' });
    await owners.create({ id: 'cus_3' });
    const one = await keys.issue({ name: 'a', scopes: [], ownerId: 'cus_1' });
    const two = await keys.issue({ name: 'b', scopes: [], ownerId: 'cus_2' });
    const three = await keys.issue({ name: 'c', scopes: [], ownerId: 'cus_3' });
    await owners.update('cus_3', { disabled: true });
    await keyring.verify(one.key);
    await keyring.verify(two.key);
    await rejection(keyring.verify(three.key));
    expect(calls.findByDigest).toBe(3);
    await owners.update('cus_1', { disabled: true });
    keyring.invalidate('owner:cus_1');
    expect((await rejection(keyring.verify(one.key))).reason).toBe('revoked');
    expect(calls.findByDigest).toBe(4);
    // Another owner's cached entries, valid and refused, stay.
    await keyring.verify(two.key);
    await rejection(keyring.verify(three.key));
    expect(calls.findByDigest).toBe(4);
    await owners.update('cus_3', { disabled: false });
    keyring.invalidate('owner:cus_3');
    await expect(keyring.verify(three.key)).resolves.toMatchObject({ id: three.record.id });
    expect(calls.findByDigest).toBe(5);
  });

  it("invalidate(id) drops that identity's entries only", async () => {
    const { keyring, keys, otherKeys, calls } = setup();
    const a = await keys.issue({ name: 'a', scopes: [] });
    const b = await keys.issue({ name: 'b', scopes: [] });
    await keyring.verify(a.key);
    await keyring.verify(b.key);
    await otherKeys.revoke(a.record.id);
    keyring.invalidate(a.record.id);
    expect((await rejection(keyring.verify(a.key))).reason).toBe('revoked');
    await keyring.verify(b.key);
    expect(calls.findByDigest).toBe(3);
  });

  it("invalidate(id) drops that identity's refusals only", async () => {
    const { keyring, keys, calls } = setup();
    const a = await keys.issue({ name: 'a', scopes: [] });
    const b = await keys.issue({ name: 'b', scopes: [] });
    await keys.revoke(a.record.id);
    await keys.revoke(b.record.id);
    await rejection(keyring.verify(a.key));
    await rejection(keyring.verify(b.key));
    keyring.invalidate(a.record.id);
    await rejection(keyring.verify(a.key));
    await rejection(keyring.verify(b.key));
    expect(calls.findByDigest).toBe(3);
  });

  it('an unknown-key answer that raced with invalidateAll is not cached', async () => {
    const { keyring, gates, calls } = setup();
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key } = await elsewhere.issue({ name: 'u', scopes: [] });
    let release!: () => void;
    gates.set('findByDigest', new Promise<void>((resolve) => (release = resolve)));
    const inFlight = rejection(keyring.verify(key));
    await tick();
    gates.delete('findByDigest');
    keyring.invalidateAll();
    release();
    expect((await inFlight).reason).toBe('unknown');
    await rejection(keyring.verify(key));
    expect(calls.findByDigest).toBe(2);
  });

  it('a revoked-key answer that raced with an eviction of that key is not cached', async () => {
    const { keyring, keys, gates, calls } = setup();
    const { key, record } = await keys.issue({ name: 'n', scopes: [] });
    await keys.revoke(record.id);
    let release!: () => void;
    gates.set('findByDigest', new Promise<void>((resolve) => (release = resolve)));
    const inFlight = rejection(keyring.verify(key));
    await tick();
    gates.delete('findByDigest');
    keyring.invalidate(record.id);
    release();
    expect((await inFlight).reason).toBe('revoked');
    await rejection(keyring.verify(key));
    expect(calls.findByDigest).toBe(2);
  });

  it("a disabled owner's answer that raced with the owner's eviction is not cached", async () => {
    const { keyring, keys, owners, gates, calls } = setup();
    await owners.create({ id: 'cus_1' });
    const { key } = await keys.issue({ name: 'n', scopes: [], ownerId: 'cus_1' });
    await owners.update('cus_1', { disabled: true });
    let release!: () => void;
    gates.set('findByDigest', new Promise<void>((resolve) => (release = resolve)));
    const inFlight = rejection(keyring.verify(key));
    await tick();
    gates.delete('findByDigest');
    await owners.update('cus_1', { disabled: false });
    keyring.invalidate('owner:cus_1');
    release();
    expect((await inFlight).reason).toBe('revoked');
    await expect(keyring.verify(key)).resolves.toMatchObject({ ownerId: 'cus_1' });
    expect(calls.findByDigest).toBe(2);
  });
});

describe('the rejection log line', () => {
  it('a malformed key: reason and last four, no keyId member, the fixed message', async () => {
    const { keyring, keys, lines } = setup();
    const { key } = await keys.issue({ name: 'n', scopes: [] });
    const malformed = `${key.slice(0, 15)}-${key.slice(16)}`;
    expect((await rejection(keyring.verify(malformed))).reason).toBe('malformed');
    expect(lines).toStrictEqual([{ fields: { reason: 'malformed', last4: key.slice(-4) }, message: 'api key rejected' }]);
  });

  it('an unknown key: reason and last four, no keyId member', async () => {
    const { keyring, lines } = setup();
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key } = await elsewhere.issue({ name: 'u', scopes: [] });
    await rejection(keyring.verify(key));
    await rejection(keyring.verify(key));
    expect(lines.map((line) => line.fields)).toStrictEqual([
      { reason: 'unknown', last4: key.slice(-4) },
      { reason: 'unknown', last4: key.slice(-4) },
    ]);
  });

  it('a key refused at its expiry from the cache: reason, last four and keyId', async () => {
    const { keyring, keys, clock, lines } = setup();
    const { key, record } = await keys.issue({ name: 'n', scopes: [], expiresAt: new Date(T0 + 1_000) });
    await keyring.verify(key);
    clock.advance(1_000);
    await rejection(keyring.verify(key));
    expect(lines).toStrictEqual([{ fields: { reason: 'expired', last4: key.slice(-4), keyId: record.id }, message: 'api key rejected' }]);
  });

  it('a text that is not a string: refused as malformed with no last four, in the error or the log', async () => {
    const { keyring, lines } = setup();
    const error = await rejection(keyring.verify(12345 as never));
    expect(error.reason).toBe('malformed');
    expect(error.last4).toBeUndefined();
    expect(lines).toStrictEqual([{ fields: { reason: 'malformed' }, message: 'api key rejected' }]);
  });

  it('a logger without warn still gets the 401', async () => {
    const { keyring } = setup({ logger: { error: () => {} } as never });
    expect((await rejection(keyring.verify(`${PREFIX}_short`))).reason).toBe('malformed');
  });
});

describe('store answers that must not let a key through', () => {
  const A = 'pepper-A-0123456789abcdef';
  const B = 'pepper-B-0123456789abcdef';

  it.each([
    ['one pepper', { pepper: A }],
    ['a rotation', { peppers: [B, A] }],
  ])("%s: a loosely matching store's row for another key is refused as unknown, whatever its digest's length", async (_, peppers) => {
    const memory = createMemoryKeyStore();
    const issuer = createKeyAdmin(createKeyring({ store: memory, prefix: PREFIX, lastUsed: false, ...peppers }));
    const { key } = await issuer.issue({ name: 'n', scopes: [] });
    const { key: otherKey } = await issuer.issue({ name: 'other', scopes: [] });
    const otherRow = (await memory.findByDigest(await digestKey(otherKey, { pepper: 'peppers' in peppers ? B : A })))!;
    const shortRow = { ...otherRow, secret: { ...otherRow.secret, digest: otherRow.secret.digest.slice(0, 32) } };
    const notHexRow = { ...otherRow, secret: { ...otherRow.secret, digest: 'z'.repeat(64) } };
    for (const row of [otherRow, shortRow, notHexRow]) {
      const loose: KeyStore = { ...memory, findByDigest: async () => row, findByDigests: async () => row };
      const keyring = createKeyring({ store: loose, prefix: PREFIX, lastUsed: false, ...peppers });
      expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
    }
  });

  it('a store that answers owner: null for a key with no owner: the key is accepted', async () => {
    const memory = createMemoryKeyStore();
    const store: KeyStore = { ...memory, findByDigest: async (digest) => {
      const found = await memory.findByDigest(digest);
      return found === undefined ? undefined : { ...found, owner: null };
    } };
    const keyring = createKeyring({ store, prefix: PREFIX, lastUsed: false });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id });
  });

  it('a disabled owner with no negative cache: refused as revoked', async () => {
    const { keyring, keys, owners } = setup({ cache: { negativeMax: 0 } });
    await owners.create({ id: 'cus_1' });
    const { key } = await keys.issue({ name: 'n', scopes: [], ownerId: 'cus_1' });
    await owners.update('cus_1', { disabled: true });
    expect((await rejection(keyring.verify(key))).reason).toBe('revoked');
  });

  it('a store outage is logged under the operation that failed, findByDigest', async () => {
    const errors: unknown[] = [];
    const store: KeyStore = { ...createMemoryKeyStore(), findByDigest: async () => Promise.reject(new Error('connection refused')) };
    const keyring = createKeyring({ store, prefix: PREFIX, lastUsed: false, logger: { warn: () => {}, error: (fields: unknown, message: unknown) => void errors.push([fields, message]) } });
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key } = await elsewhere.issue({ name: 'u', scopes: [] });
    await keyring.verify(key).catch(() => undefined);
    expect(JSON.stringify(errors)).toContain('findByDigest');
  });
});

describe('the caches draw their salt from the keyring crypto', () => {
  it.each([
    ['valid', true],
    ['refused', false],
  ])('the %s cache takes 4 random bytes when it first stores an entry', async (_, known) => {
    const lengths: number[] = [];
    const crypto = { ...nodeCrypto, randomBytes: (length: number) => (lengths.push(length), nodeCrypto.randomBytes(length)) };
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, crypto });
    const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false }));
    const { key } = await (known ? createKeyAdmin(keyring) : elsewhere).issue({ name: 'n', scopes: [] });
    lengths.length = 0;
    await keyring.verify(key).catch(() => undefined);
    expect(lengths).toStrictEqual([4]);
  });
});

describe('pepper rotation lookups', () => {
  it('one pepper: a row stored before pepper ids were stored verifies (nothing to re-hash)', async () => {
    const memory = createMemoryKeyStore();
    const store: KeyStore = { ...memory, findByDigest: async (digest) => {
      const found = await memory.findByDigest(digest);
      return found === undefined ? undefined : { ...found, secret: { ...found.secret, pepperId: null } };
    } };
    const keyring = createKeyring({ store, prefix: PREFIX, lastUsed: false, pepper: 'pepper-A-0123456789abcdef' });
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: record.id });
  });

  const A = 'pepper-A-0123456789abcdef';
  const B = 'pepper-B-0123456789abcdef';

  it("asks the store once with each pepper's digest once", async () => {
    const memory = createMemoryKeyStore();
    const asked: (readonly string[])[] = [];
    const store: KeyStore = { ...memory, findByDigests: async (digests) => (asked.push(digests), memory.findByDigests!(digests)) };
    const issuer = createKeyAdmin(createKeyring({ store: memory, prefix: PREFIX, lastUsed: false, pepper: A }));
    const { key, record } = await issuer.issue({ name: 'n', scopes: [] });
    const ring = createKeyring({ store, prefix: PREFIX, lastUsed: false, cache: false, peppers: [B, A] });
    await expect(ring.verify(key)).resolves.toMatchObject({ id: record.id });
    await ring.close();
    expect(asked).toStrictEqual([[await digestKey(key, { pepper: B }), await digestKey(key, { pepper: A })]]);
  });

  it('a key under the newest pepper stored without a pepper id is re-hashed once to record it', async () => {
    const memory = createMemoryKeyStore();
    const rehashed: unknown[] = [];
    const store: KeyStore = {
      ...memory,
      findByDigests: async (digests) => {
        const found = await memory.findByDigests!(digests);
        return found === undefined ? undefined : { ...found, secret: { ...found.secret, pepperId: null } };
      },
      rehashDigests: async (changes) => (rehashed.push(...changes), memory.rehashDigests!(changes)),
    };
    const ring = createKeyring({ store, prefix: PREFIX, lastUsed: false, cache: false, peppers: [B, A] });
    const { key } = await createKeyAdmin(ring).issue({ name: 'n', scopes: [] });
    await ring.verify(key);
    await ring.close();
    const digest = await digestKey(key, { pepper: B });
    expect(rehashed).toMatchObject([{ from: digest, to: digest }]);
  });
});

describe('a rejection forgotten when the key is issued', () => {
  it('a text refused as unknown verifies once a key with that text is issued', async () => {
    // Every random byte zero: two issues make the same key text, so a text can be refused
    // before the key is issued.
    const crypto = { ...nodeCrypto, randomBytes: (length: number) => new Uint8Array(length) };
    const issuer = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, crypto }));
    const { key } = await issuer.issue({ name: 'n', scopes: [] });
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, crypto });
    expect((await rejection(keyring.verify(key))).reason).toBe('unknown');
    const issued = await createKeyAdmin(keyring).issue({ name: 'n', scopes: [] });
    expect(issued.key).toBe(key);
    await expect(keyring.verify(key)).resolves.toMatchObject({ id: issued.record.id });
  });
});
