/**
 * What `digestKey` and `createRawDigest` store and refuse, exactly: SHA-256 or
 * HMAC-SHA256 of the key in lowercase hex, a pepper of 16 bytes (counted in UTF-8) and not
 * 15, a pepper copied when given (changing the caller's array later changes nothing), and
 * the binary form only when the provider has one.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError } from '../errors.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { createRawDigest, digestKey } from './key-digest.ts';

const KEY = 'acme_live_0123456789abcdefghijABCDEFGHIJ1a2B3c';
const PEPPER = 'pepper-of-16-byt';
const PEPPER_MESSAGE = 'pepper must be a string or Uint8Array of at least 16 bytes (generate 32 random bytes once and keep them in your secret store)';
const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const hmacHex = (pepper: string | Uint8Array, text: string): string => createHmac('sha256', pepper).update(text, 'utf8').digest('hex');
const binary = (hex: string): string => Buffer.from(hex, 'hex').toString('latin1');

/** A provider with only the required methods: no binary digests. */
const plainProvider: CryptoProvider = {
  name: 'plain',
  sha256: (data) => defaultCrypto.sha256(data),
  hmacSha256: (key, data) => defaultCrypto.hmacSha256(key, data),
  randomBytes: (length) => defaultCrypto.randomBytes(length),
  timingSafeEqual: (a, b) => defaultCrypto.timingSafeEqual(a, b),
};

describe('digestKey edges', () => {
  it('is the lowercase hex SHA-256 of the key without a pepper', async () => {
    expect(await digestKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await digestKey(KEY)).toBe(sha256Hex(KEY));
  });

  it('is the lowercase hex HMAC-SHA256 under a pepper, string or bytes', async () => {
    expect(await digestKey(KEY, { pepper: PEPPER })).toBe(hmacHex(PEPPER, KEY));
    const bytes = new TextEncoder().encode(PEPPER);
    expect(await digestKey(KEY, { pepper: bytes })).toBe(hmacHex(PEPPER, KEY));
  });

  it('takes a pepper of 16 bytes and refuses 15, counting a string in UTF-8', async () => {
    await expect(digestKey(KEY, { pepper: PEPPER.slice(1) })).rejects.toThrow(ConfigError);
    await expect(digestKey(KEY, { pepper: PEPPER.slice(1) })).rejects.toThrow(PEPPER_MESSAGE);
    await expect(digestKey(KEY, { pepper: new Uint8Array(15) })).rejects.toThrow(PEPPER_MESSAGE);
    expect(await digestKey(KEY, { pepper: new Uint8Array(16) })).toBe(hmacHex(new Uint8Array(16), KEY));
    // 8 characters, 16 bytes.
    expect(await digestKey(KEY, { pepper: 'éééééééé' })).toBe(hmacHex('éééééééé', KEY));
  });

  it.each([42, ['pepper-of-16-bytes'], null])('refuses the pepper %j', async (pepper) => {
    await expect(digestKey(KEY, { pepper: pepper as never })).rejects.toThrow(PEPPER_MESSAGE);
  });

  it('names itself for an unknown option', async () => {
    await expect(digestKey(KEY, { peper: PEPPER } as never)).rejects.toThrow(/^digestKey: unknown option `peper`/);
  });
});

describe('createRawDigest edges', () => {
  it('copies a pepper given as bytes: changing them afterwards changes nothing', async () => {
    const bytes = new TextEncoder().encode(PEPPER);
    const digest = createRawDigest({ pepper: bytes });
    bytes.fill(0);
    expect(Buffer.from(await digest(KEY)).toString('hex')).toBe(hmacHex(PEPPER, KEY));
    expect(digest.binary?.(KEY)).toBe(binary(hmacHex(PEPPER, KEY)));
  });

  it('gives the same digest as a binary string when the provider can', () => {
    expect(createRawDigest().binary?.(KEY)).toBe(binary(sha256Hex(KEY)));
    expect(createRawDigest({ pepper: PEPPER }).binary?.(KEY)).toBe(binary(hmacHex(PEPPER, KEY)));
  });

  it('has no binary form when the provider has none, and digests through the provider', async () => {
    const plain = createRawDigest({ crypto: plainProvider });
    const peppered = createRawDigest({ crypto: plainProvider, pepper: PEPPER });
    expect(plain.binary).toBeUndefined();
    expect(peppered.binary).toBeUndefined();
    expect(Buffer.from(await plain(KEY)).toString('hex')).toBe(sha256Hex(KEY));
    expect(Buffer.from(await peppered(KEY)).toString('hex')).toBe(hmacHex(PEPPER, KEY));
  });
});
