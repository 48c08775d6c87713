import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { BASE62_ALPHABET, encodeBase62Fixed, randomBase62 } from '../internal/base62.ts';
import { crc32Ascii } from '../internal/crc32.ts';
import { webCrypto } from '../crypto/crypto.web.ts';
import { KEY_BAD_CHECKSUM, KEY_MALFORMED, KEY_OK, checkKey, generateKey, isValidKeyPrefix, parseKey } from './key-format.ts';

const PREFIX = 'acme_live';

/** Builds a key from a chosen random part, so tests can craft exact inputs. */
function keyWith(random: string, prefix = PREFIX): string {
  const head = `${prefix}_${random}`;
  return head + encodeBase62Fixed(crc32Ascii(head), 6);
}

describe('crc32Ascii', () => {
  it('matches the IEEE check value and other published vectors', () => {
    expect(crc32Ascii('123456789')).toBe(0xcbf43926);
    expect(crc32Ascii('')).toBe(0);
    expect(crc32Ascii('The quick brown fox jumps over the lazy dog')).toBe(0x414fa339);
  });

  it('covers only the requested range', () => {
    expect(crc32Ascii('xx123456789yy', 2, 11)).toBe(0xcbf43926);
  });
});

describe('encodeBase62Fixed', () => {
  it('is fixed width and zero padded', () => {
    expect(encodeBase62Fixed(0, 6)).toBe('000000');
    expect(encodeBase62Fixed(61, 6)).toBe('00000z');
    expect(encodeBase62Fixed(62, 6)).toBe('000010');
    expect(encodeBase62Fixed(0xffffffff, 6)).toBe('4gfFC3');
  });
});

describe('randomBase62', () => {
  it('skips bytes ≥ 248 instead of folding them onto the first digits', () => {
    // 248..255 would be 0..7 under a plain modulo; they must be dropped.
    const bytes = [248, 255, 250, 0, 61, 62, 247];
    let calls = 0;
    const source = (n: number): Uint8Array => {
      calls++;
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = bytes.shift() ?? 1;
      return out;
    };
    expect(randomBase62(source, 4)).toBe(`0${BASE62_ALPHABET[61]}0${BASE62_ALPHABET[247 % 62]}`);
    expect(calls).toBeGreaterThanOrEqual(1);
  });

  it('draws again when too many bytes were rejected', () => {
    let calls = 0;
    const source = (n: number): Uint8Array => {
      calls++;
      return new Uint8Array(n).fill(calls < 3 ? 255 : 5);
    };
    expect(randomBase62(source, 8)).toBe('55555555');
    expect(calls).toBe(3);
  });
});

describe('isValidKeyPrefix', () => {
  it.each(['acme', 'acme_live', 'a1_b2_c3', 'x'])('accepts %s', (p) => expect(isValidKeyPrefix(p)).toBe(true));
  it.each(['', 'Acme', 'acme-live', '1acme', 'acme_', '_acme', 'acme__live', 'acme live', 'a'.repeat(33), 42])(
    'rejects %s',
    (p) => expect(isValidKeyPrefix(p)).toBe(false),
  );
});

describe('generateKey', () => {
  it('produces <prefix>_<32 base62><6 base62 checksum> that parses', () => {
    const key = generateKey(PREFIX);
    expect(key).toMatch(/^acme_live_[0-9A-Za-z]{38}$/);
    expect(key).toHaveLength(PREFIX.length + 1 + 38);
    expect(parseKey(key, PREFIX)).toEqual({ ok: true, key: { prefix: PREFIX, last4: key.slice(-4) } });
  });

  it('uses the crypto provider it is given', () => {
    const zeros = { ...webCrypto, randomBytes: (n: number) => new Uint8Array(n) };
    expect(generateKey('k', { crypto: zeros })).toBe(keyWith('0'.repeat(32), 'k'));
  });

  it('never repeats', () => {
    const seen = new Set(Array.from({ length: 2000 }, () => generateKey(PREFIX)));
    expect(seen.size).toBe(2000);
  });

  it('throws a ConfigError for a bad prefix', () => {
    expect(() => generateKey('Bad-Prefix')).toThrow(ConfigError);
  });
});

describe('parseKey / checkKey', () => {
  const good = keyWith('0123456789abcdefghijABCDEFGHIJkl');

  it('accepts the exact spelling only', () => {
    expect(checkKey(good, PREFIX)).toBe(KEY_OK);
    expect(checkKey(` ${good}`, PREFIX)).toBe(KEY_MALFORMED);
    expect(checkKey(`${good} `, PREFIX)).toBe(KEY_MALFORMED);
    expect(checkKey(good.toUpperCase(), PREFIX)).toBe(KEY_MALFORMED);
  });

  it('reports a wrong prefix, length or character as malformed', () => {
    expect(parseKey(good.replace('acme_live', 'acme_test'), PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey(good.slice(0, -1), PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey(`${good}0`, PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey(good.replace('abc', 'a-c'), PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey(good.replace('abc', 'aéc'), PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey('', PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    // A key of a shorter prefix whose body happens to start with the rest of ours.
    expect(parseKey(keyWith('0123456789abcdefghijABCDEFGHIJkl', 'acme'), PREFIX)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseKey(undefined as unknown as string, PREFIX)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('reports a right shape with a wrong checksum as checksum', () => {
    const typo = good.slice(0, 12) + (good[12] === 'x' ? 'y' : 'x') + good.slice(13);
    expect(parseKey(typo, PREFIX)).toEqual({ ok: false, reason: 'checksum' });
    expect(checkKey(typo, PREFIX)).toBe(KEY_BAD_CHECKSUM);
  });

  it('rejects a checksum spelling above 2^32 (one spelling per key)', () => {
    const head = `${PREFIX}_${'a'.repeat(32)}`;
    const crc = crc32Ascii(head);
    const alias = encodeBase62Fixed(crc + 2 ** 32, 6);
    expect(alias).not.toBe(encodeBase62Fixed(crc, 6));
    expect(parseKey(head + alias, PREFIX)).toEqual({ ok: false, reason: 'checksum' });
  });

  it('exposes no more than the last 4 characters', () => {
    const parsed = parseKey(good, PREFIX);
    expect(JSON.stringify(parsed)).not.toContain(good.slice(-5));
  });
});
