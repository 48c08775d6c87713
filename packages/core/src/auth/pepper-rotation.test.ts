import { describe, expect, it } from 'vitest';
import { rejectionOf } from '@keyset/test-support';
import { webCrypto } from '../crypto/crypto.web.ts';
import { AuthenticationError, ConfigError } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { digestKey } from '../keys/key-digest.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createKeyring, type KeyringOptions } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const A = 'pepper-A-0123456789abcdef';
const B = 'pepper-B-0123456789abcdef';
const C = 'pepper-C-0123456789abcdef';

/** The real memory store, with every call counted by method (a wrapper, not a mock). */
function countingStore(store: KeyStore = createMemoryKeyStore()): { store: KeyStore; calls: Record<string, number>; changes: number[] } {
  const calls: Record<string, number> = {};
  const changes: number[] = [];
  const wrapped = Object.fromEntries(
    Object.entries(store).map(([name, method]) => [
      name,
      (...args: unknown[]) => {
        calls[name] = (calls[name] ?? 0) + 1;
        if (name === 'rehashDigests') changes.push((args[0] as unknown[]).length);
        return (method as (...a: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as KeyStore;
  return { store: wrapped, calls, changes };
}

const keyring = (store: KeyStore, options: Partial<KeyringOptions> = {}) =>
  createKeyring({ store, prefix: 'acme_test', cache: false, lastUsed: false, ...options });

const refusal = (promise: Promise<unknown>): Promise<AuthenticationError> => rejectionOf(promise, AuthenticationError);

describe('peppers: options', () => {
  const store = createMemoryKeyStore();
  it.each([
    [{ pepper: A, peppers: [B, A] }, /pepper and peppers were both given/],
    [{ peppers: [] }, /peppers must be a non-empty array/],
    [{ peppers: [B, 'short'] }, /peppers\[1\]: pepper must be a string or Uint8Array of at least 16 bytes/],
    [{ peppers: [B, undefined as never] }, /peppers\[1\] is undefined/],
    [{ peppers: [B, A, B] }, /peppers\[2\] is the same pepper as peppers\[0\]/],
    [{ pepper: 'short' }, /^pepper must be a string/],
  ])('%o is a ConfigError', (options, message) => {
    expect(() => keyring(store, options as Partial<KeyringOptions>)).toThrow(ConfigError);
    expect(() => keyring(store, options as Partial<KeyringOptions>)).toThrow(message);
  });

  it('more than one pepper needs findByDigests and rehashDigests; one pepper does not', () => {
    const { findByDigests: _f, rehashDigests: _r, ...older } = createMemoryKeyStore();
    expect(() => keyring(older as KeyStore, { peppers: [B, A] })).toThrow(/needs a store with findByDigests\(\)/);
    expect(() => keyring(older as KeyStore, { peppers: [B] })).not.toThrow();
  });

  it('peppers: [p] issues the same digests as pepper: p', async () => {
    const store = createMemoryKeyStore();
    const { key, record } = await createKeyAdmin(keyring(store, { peppers: [A] })).issue({ name: 'n', scopes: [] });
    expect((await keyring(store, { pepper: A }).verify(key)).id).toBe(record.id);
    expect((await store.findByDigest(await digestKey(key, { pepper: A })))?.identity.id).toBe(record.id);
  });
});

describe('peppers: rotation', () => {
  it('a key stored under an older pepper verifies, is re-hashed under the newest once, and the counts follow', async () => {
    const memory = createMemoryKeyStore();
    const admin = createKeyAdmin(keyring(memory, { pepper: A }));
    const issued = await Promise.all([0, 1, 2].map((n) => admin.issue({ name: `k${n}`, scopes: [] })));
    const { store, calls, changes } = countingStore(memory);
    const rotated = keyring(store, { peppers: [B, A] });
    const rotatedAdmin = createKeyAdmin(rotated);
    const [idB, idA] = (await rotatedAdmin.pepperCounts()).map((c) => c.pepperId);
    expect(await rotatedAdmin.pepperCounts()).toEqual([
      { pepperId: idB, pepper: 0, count: 0 },
      { pepperId: idA, pepper: 1, count: 3 },
    ]);

    // The same key five times at once (no cache): five lookups, one re-hash.
    const [first, second] = issued;
    await Promise.all([1, 2, 3, 4, 5].map(() => rotated.verify(first!.key)));
    await rotated.verify(second!.key);
    await rotated.close();
    expect(calls.findByDigests).toBe(6);
    expect(calls.findByDigest).toBeUndefined();
    expect(changes.reduce((a, b) => a + b, 0)).toBe(2);
    expect((await memory.findByDigest(await digestKey(first!.key, { pepper: B })))?.secret.pepperId).toBe(idB);
    expect(await memory.findByDigest(await digestKey(first!.key, { pepper: A }))).toBeUndefined();
    expect(await rotatedAdmin.pepperCounts()).toEqual([
      { pepperId: idB, pepper: 0, count: 2 },
      { pepperId: idA, pepper: 1, count: 1 },
    ]);

    // Re-hashed keys verify under B alone; the one never used still needs A.
    const onlyB = keyring(memory, { pepper: B });
    expect((await onlyB.verify(first!.key)).id).toBe(first!.record.id);
    expect((await refusal(onlyB.verify(issued[2]!.key))).reason).toBe('unknown');
  });

  it('an unknown key costs one lookup, whatever the number of peppers', async () => {
    const { store, calls } = countingStore();
    const ring = keyring(store, { peppers: [C, B, A] });
    const stranger = (await createKeyAdmin(keyring(createMemoryKeyStore(), { pepper: A })).issue({ name: 'elsewhere', scopes: [] })).key;
    expect((await refusal(ring.verify(stranger))).reason).toBe('unknown');
    expect(calls).toEqual({ findByDigests: 1 });
  });

  it('a key under the newest pepper is not re-hashed; a revoked key under an old one is refused and left alone', async () => {
    const memory = createMemoryKeyStore();
    const old = (await createKeyAdmin(keyring(memory, { pepper: A })).issue({ name: 'old', scopes: [] }));
    const { store, calls } = countingStore(memory);
    const ring = keyring(store, { peppers: [B, A] });
    const admin = createKeyAdmin(ring);
    const fresh = await admin.issue({ name: 'new', scopes: [] });
    await admin.revoke(old.record.id);
    await ring.verify(fresh.key);
    expect((await refusal(ring.verify(old.key))).reason).toBe('revoked');
    await ring.close();
    expect(calls.rehashDigests).toBeUndefined();
    // Revoked secrets are not counted: they never need re-hashing.
    expect((await admin.pepperCounts()).map((c) => c.count)).toEqual([1, 0]);
  });

  it('adds a pepper to a keyring that had none (null: plain SHA-256)', async () => {
    const memory = createMemoryKeyStore();
    const { key, record } = await createKeyAdmin(keyring(memory)).issue({ name: 'n', scopes: [] });
    const ring = keyring(memory, { peppers: [B, null] });
    expect((await ring.verify(key)).id).toBe(record.id);
    await ring.close();
    expect((await memory.findByDigest(await digestKey(key, { pepper: B })))?.identity.id).toBe(record.id);
    expect((await keyring(memory, { pepper: B }).verify(key)).id).toBe(record.id);
  });

  it('with the cache on, a re-hashed key keeps its last use (written under the new digest)', async () => {
    const memory = createMemoryKeyStore();
    const { key, record } = await createKeyAdmin(keyring(memory, { pepper: A })).issue({ name: 'n', scopes: [] });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const ring = createKeyring({ store: memory, prefix: 'acme_test', peppers: [B, A], clock: () => now });
    await ring.verify(key);
    now += 1000;
    ring.verify(key);
    await ring.close();
    expect((await memory.getIdentity(record.id))?.secrets[0]?.lastUsedAt?.getTime()).toBe(now);
  });

  it('works with an asynchronous digest (Web Crypto)', async () => {
    const memory = createMemoryKeyStore();
    const { key, record } = await createKeyAdmin(keyring(memory, { pepper: A, crypto: webCrypto })).issue({ name: 'n', scopes: [] });
    const ring = keyring(memory, { peppers: [B, A], crypto: webCrypto });
    expect((await ring.verify(key)).id).toBe(record.id);
    await ring.close();
    expect((await keyring(memory, { pepper: B, crypto: webCrypto }).verify(key)).id).toBe(record.id);
  });
});
