/**
 * What the fingerprint is made of, byte for byte (cursors issued before an upgrade must
 * still match after it), and what the fingerprint cache saves: a filter set seen before is
 * answered without hashing, synchronously, and the cache holds at most 1024 filter sets,
 * so a client cycling through filter values cannot grow it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { createFingerprintCache, cursorFingerprint, fingerprintWith, scopePrefix } from './cursor-fingerprint.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';

const sha256Base64url = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url');

describe('cursorFingerprint preimage', () => {
  it('hashes the version, endpoint, each sort key (key, column, direction, type, nulls, unique) and the canonical filters', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp', nullable: { nulls: 'last' } },
      { key: 'name', dir: 'asc', type: 'string' },
      { key: 'id', dir: 'asc', type: 'int', unique: true },
    ]);
    const keys = sort.map((k) => [k.key, k.column, k.dir, k.type, k.nullable ? k.nullable.nulls : false, k.unique === true]);
    expect(keys).toEqual([
      ['createdAt', 'created_at', 'desc', 'timestamp', 'last', false],
      ['name', 'name', 'asc', 'string', false, false],
      ['id', 'id', 'asc', 'int', false, true],
    ]);
    const expected = sha256Base64url(`keyset-fp-v1\u0000"GET /orders"\u0000${JSON.stringify(keys)}\u0000{"status":"paid"}`);
    expect(await cursorFingerprint({ endpoint: 'GET /orders', sort, filters: { status: 'paid' } })).toBe(expected);
    expect(scopePrefix('GET /orders', sort)).toBe(`keyset-fp-v1\u0000"GET /orders"\u0000${JSON.stringify(keys)}\u0000`);
  });
});

describe('fingerprint cache edges', () => {
  const sort = defineSortSpec([{ key: 'id', dir: 'asc', type: 'int', unique: true }]);
  const prefix = scopePrefix('GET /things', sort);

  function counting(): { crypto: CryptoProvider; hashes: () => number } {
    let hashes = 0;
    const crypto: CryptoProvider = {
      ...nodeCrypto,
      name: 'counting',
      sha256: (data) => {
        hashes++;
        return nodeCrypto.sha256(data);
      },
    };
    return { crypto, hashes: () => hashes };
  }

  it.each([
    ['no filters', undefined],
    ['an empty object', {}],
    ['one string member', { status: 'paid' }],
    ['one number member', { n: 1 }],
    ['two members', { a: 'x', b: 'y' }],
    ['a null-prototype record', Object.assign(Object.create(null) as Record<string, unknown>, { status: 'x' })],
    ['an array', ['paid'] as unknown as Record<string, unknown>],
  ])('answers %s seen before from the cache: synchronously, the same fingerprint, no hash', async (_name, filters) => {
    const { crypto, hashes } = counting();
    const cache = createFingerprintCache(crypto, prefix);
    const first = await cache.get(filters);
    expect(first).toBe(await fingerprintWith(nodeCrypto, prefix, filters));
    expect(hashes()).toBe(1);
    expect(cache.get(filters)).toBe(first);
    expect(cache.get(filters)).toBe(first);
    expect(hashes()).toBe(1);
  });

  it('tells an array from the record with the same member', async () => {
    const cache = createFingerprintCache(nodeCrypto, prefix);
    const array = ['paid'] as unknown as Record<string, unknown>;
    expect(await cache.get(array)).toBe(await fingerprintWith(nodeCrypto, prefix, array));
    expect(await cache.get({ 0: 'paid' })).toBe(await fingerprintWith(nodeCrypto, prefix, { 0: 'paid' }));
    expect(await cache.get({ 0: 'paid' })).not.toBe(await cache.get(array));
  });

  it('shares one entry between filter sets of the same canonical text', async () => {
    const { crypto, hashes } = counting();
    const cache = createFingerprintCache(crypto, prefix);
    const plain = await cache.get({ status: 'paid' });
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { status: 'paid' });
    expect(cache.get(nullProto)).toBe(plain);
    expect(cache.get({ status: 'paid', gone: undefined })).toBe(plain);
    expect(cache.get({})).not.toBe(plain);
    expect(hashes()).toBe(2);
  });

  it.each([
    ['one member', (i: number): Record<string, unknown> => ({ id: `v${i}` })],
    ['two members', (i: number): Record<string, unknown> => ({ id: 'x', n: i })],
  ])('keeps 1024 filter sets of %s, and drops the oldest at the 1025th', async (_shape, filters) => {
    const { crypto, hashes } = counting();
    const cache = createFingerprintCache(crypto, prefix);
    for (let i = 0; i < 1024; i++) await cache.get(filters(i));
    expect(typeof cache.get(filters(0))).toBe('string');
    expect(typeof cache.get(filters(1023))).toBe('string');
    expect(hashes()).toBe(1024);
    await cache.get(filters(1024));
    expect(hashes()).toBe(1025);
    expect(typeof cache.get(filters(1))).toBe('string');
    expect(await cache.get(filters(0))).toBe(await fingerprintWith(nodeCrypto, prefix, filters(0)));
    expect(hashes()).toBe(1026);
  });
});
