/**
 * Edges of the key format that the mutation run (`pnpm mutate`, docs/security.md,
 * "Mutation testing") found untested: each test here failed against one surviving mutant
 * of `key-format.ts`. Keys are built by hand with an independent CRC-32 (`node:zlib`) so a
 * text can carry a valid checksum and still break one rule of the syntax.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { KEY_BAD_CHECKSUM, KEY_MALFORMED, KEY_OK, checkKey, generateKey, isValidKeyPrefix, keyPattern, parseKey } from './key-format.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `head` followed by the 6 base62 digits of its CRC-32 (IEEE), most significant first. */
function withChecksum(head: string): string {
  let n = crc32(head);
  let digits = '';
  for (let i = 0; i < 6; i++, n = Math.floor(n / 62)) digits = BASE62[n % 62] + digits;
  return head + digits;
}

const RANDOM = 'aZ09'.repeat(8); // 32 base62 characters

describe('the key syntax, beyond the checksum', () => {
  it('the independent checksum agrees with keyset: a hand-built key checks', () => {
    expect(checkKey(withChecksum(`acme_live_${RANDOM}`), 'acme_live')).toBe(KEY_OK);
  });

  it('refuses a key whose separator is another base62 character, even with a valid checksum', () => {
    for (const separator of ['Q', '0', 'z']) {
      const text = withChecksum(`acme_live${separator}${RANDOM}`);
      expect(checkKey(text, 'acme_live'), separator).toBe(KEY_MALFORMED);
      expect(parseKey(text, 'acme_live')).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('a character outside ASCII in the body is malformed, not a checksum failure (U+0080 included)', () => {
    const key = generateKey('acme_live');
    for (const char of ['\u0080', '\u00ff', '\u0100', '\u{1F600}'.slice(0, 1)]) {
      for (const at of [12, key.length - 2]) {
        const text = key.slice(0, at) + char + key.slice(at + 1);
        expect(parseKey(text, 'acme_live'), `${char.charCodeAt(0)} at ${at}`).toEqual({ ok: false, reason: 'malformed' });
      }
    }
    expect(checkKey(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), 'acme_live')).toBe(KEY_BAD_CHECKSUM);
  });
});

describe('isValidKeyPrefix, edges', () => {
  it('accepts 32 characters and refuses 33', () => {
    expect(isValidKeyPrefix('a'.repeat(32))).toBe(true);
    expect(isValidKeyPrefix('a'.repeat(33))).toBe(false);
    expect(generateKey('a'.repeat(32))).toHaveLength(32 + 1 + 38);
  });

  it('refuses anything but a string, even what would stringify to a valid prefix', () => {
    for (const value of [['acme_live'], { toString: () => 'acme', length: 4 }, null, undefined, 42]) {
      expect(isValidKeyPrefix(value)).toBe(false);
    }
  });
});

describe('generateKey and keyPattern, options and arguments', () => {
  it('generateKey names itself when an option is misspelt', () => {
    expect(() => generateKey('acme_live', { crpto: undefined } as never)).toThrow(/^generateKey: unknown option `crpto`/);
  });

  it('keyPattern takes one prefix as a string, and gives the plain pattern a scanner is configured with', () => {
    expect(keyPattern('acme_live')).toBe('(?<![0-9A-Za-z_])acme_live_[0-9A-Za-z]{38}(?![0-9A-Za-z])');
    expect(keyPattern(['acme_live'])).toBe(keyPattern('acme_live'));
    const key = generateKey('acme_live');
    expect(new RegExp(keyPattern('acme_live')).exec(`token=${key};`)?.[0]).toBe(key);
  });

  it('keyPattern refuses an empty list and any invalid prefix with a ConfigError that says what to change', () => {
    expect(() => keyPattern([])).toThrow(new ConfigError('keyPattern needs at least one prefix'));
    expect(() => keyPattern(['acme_live', 'Acme-Test'])).toThrow(/prefix must match/);
    expect(() => keyPattern('acme live')).toThrow(ConfigError);
  });
});
