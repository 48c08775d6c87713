/**
 * `onCacheLookup`: one call per lookup of a well-formed key, saying whether the cache
 * answered (`hit`, `negative_hit`) or the store was asked (`miss`); none for a key refused
 * before any lookup.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createKeyring } from './keyring.ts';
import type { KeyCacheResult } from './keyring-options.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const PREFIX = 'acme_live';
const request = (key: string) => ({ authorization: `ApiKey ${key}`, url: '/api/orders' });

async function setup() {
  const lookups: KeyCacheResult[] = [];
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, onCacheLookup: (result) => void lookups.push(result) });
  const admin = createKeyAdmin(keyring);
  // Well-formed, checksum right, but issued into another store: unknown here.
  const elsewhere = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false });
  const unknown = (await createKeyAdmin(elsewhere).issue({ name: 'elsewhere', scopes: [] })).key;
  return { keyring, admin, lookups, unknown };
}

const refused = (promise: Promise<unknown>) => promise.then(() => 'admitted', () => 'refused');

describe('createKeyring({ onCacheLookup })', () => {
  it('a valid key: the store once, then the cache', async () => {
    const { keyring, admin, lookups } = await setup();
    const { key } = await admin.issue({ name: 'reader', scopes: [] });
    await keyring.authenticate(request(key));
    await keyring.authenticate(request(key));
    await keyring.authenticate(request(key));
    expect(lookups).toEqual(['miss', 'hit', 'hit']);
  });

  it('an unknown key: the store once, then the negative cache', async () => {
    const { keyring, lookups, unknown } = await setup();
    expect(await refused(keyring.authenticate(request(unknown)))).toBe('refused');
    expect(await refused(keyring.authenticate(request(unknown)))).toBe('refused');
    expect(lookups).toEqual(['miss', 'negative_hit']);
  });

  it('a revoked key: evicted, so the store again, then the negative cache', async () => {
    const { keyring, admin, lookups } = await setup();
    const { key, record } = await admin.issue({ name: 'reader', scopes: [] });
    await keyring.authenticate(request(key));
    await admin.revoke(record.id);
    expect(await refused(keyring.authenticate(request(key)))).toBe('refused');
    expect(await refused(keyring.authenticate(request(key)))).toBe('refused');
    expect(lookups).toEqual(['miss', 'miss', 'negative_hit']);
  });

  it('no lookup for a key refused on its form or checksum, nor without a key', async () => {
    const { keyring, lookups, unknown } = await setup();
    const typo = `${unknown.slice(0, -1)}${unknown.endsWith('A') ? 'B' : 'A'}`;
    for (const text of ['acme_live_short', typo, 'not a key at all']) expect(await refused(keyring.authenticate(request(text)))).toBe('refused');
    expect(await refused(keyring.authenticate({ authorization: undefined, url: '/api/orders' }))).toBe('refused');
    expect(lookups).toEqual([]);
  });

  it('with cache: false every lookup is a miss', async () => {
    const lookups: KeyCacheResult[] = [];
    const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, lastUsed: false, cache: false, onCacheLookup: (result) => void lookups.push(result) });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'reader', scopes: [] });
    await keyring.authenticate(request(key));
    await keyring.authenticate(request(key));
    expect(lookups).toEqual(['miss', 'miss']);
  });

  it('refuses a hook that is not a function, saying what to pass', () => {
    expect(() => createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, onCacheLookup: 'yes' as never })).toThrow(ConfigError);
    expect(() => createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, onCacheLookup: 'yes' as never })).toThrow(/onCacheLookup must be a function/);
  });
});
