/**
 * The API-key string: `<prefix>_<32 base62 random><6 base62 CRC-32>`.
 * 32 base62 characters carry 32·log2(62) ≈ 190.5 bits from a CSPRNG; the CRC-32 of
 * `<prefix>_<random>`, as 6 fixed-width base62 digits, rejects typos and junk before any
 * store lookup and lets secret scanners recognise a leaked key. No id is embedded.
 * @module
 */
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError } from '../errors.ts';
import { BASE62_VALUE, encodeBase62Fixed, randomBase62 } from '../internal/base62.ts';
import { crc32Ascii } from '../internal/crc32.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';

/** Characters of the random part. */
export const KEY_RANDOM_LENGTH = 32;
/** Characters of the checksum part. */
export const KEY_CHECKSUM_LENGTH = 6;
const BODY_LENGTH = KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;
const MAX_PREFIX_LENGTH = 32;
const PREFIX_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** A key that passed `parseKey`. Only the parts safe to log: never the random part. */
export interface ParsedKey {
  readonly prefix: string;
  /** Last 4 characters of the key (part of the checksum), safe to show. */
  readonly last4: string;
}

/** Result of `parseKey`: the key's safe parts, or why it is not a key. */
export type ParseKeyResult =
  | { readonly ok: true; readonly key: ParsedKey }
  | { readonly ok: false; readonly reason: 'malformed' | 'checksum' };

/** Internal outcome codes of `checkKey`, allocation-free for the request path. */
export const KEY_OK = 0;
export const KEY_MALFORMED = 1;
export const KEY_BAD_CHECKSUM = 2;
export type KeyCheck = typeof KEY_OK | typeof KEY_MALFORMED | typeof KEY_BAD_CHECKSUM;

/**
 * Whether `prefix` is a valid key prefix: lowercase letters and digits in `_`-separated
 * words, starting with a letter, at most 32 characters (e.g. `acme_live`).
 *
 * @example
 * ```ts
 * isValidKeyPrefix('acme_live'); // true
 * isValidKeyPrefix('Acme-Live'); // false
 * ```
 */
export function isValidKeyPrefix(prefix: unknown): prefix is string {
  return typeof prefix === 'string' && prefix.length <= MAX_PREFIX_LENGTH && PREFIX_PATTERN.test(prefix);
}

/** Throws a `ConfigError` saying what to change unless `prefix` is valid. */
export function assertKeyPrefix(prefix: unknown): asserts prefix is string {
  if (!isValidKeyPrefix(prefix)) {
    throw new ConfigError(
      `prefix must match ^[a-z][a-z0-9]*(_[a-z0-9]+)*$ and have at most ${MAX_PREFIX_LENGTH} characters (e.g. 'acme_live'), got ${JSON.stringify(String(prefix))}`,
    );
  }
}

/** Every name `generateKey`'s options know, checked on each call. */
const GENERATE_KEY_OPTIONS = { crypto: true } as const satisfies KnownOptions<NonNullable<Parameters<typeof generateKey>[1]>>;

/**
 * A new random key for `prefix`. Show it to its owner once; store only its digest.
 *
 * @example
 * ```ts
 * const key = generateKey('acme_live'); // 'acme_live_4qK…' (49 characters)
 * ```
 */
export function generateKey(prefix: string, options: { crypto?: CryptoProvider } = {}): string {
  assertKnownOptions('generateKey', options, GENERATE_KEY_OPTIONS);
  assertKeyPrefix(prefix);
  const { crypto = defaultCrypto } = options;
  const head = `${prefix}_${randomBase62((n) => crypto.randomBytes(n), KEY_RANDOM_LENGTH)}`;
  return head + encodeBase62Fixed(crc32Ascii(head), KEY_CHECKSUM_LENGTH);
}

/**
 * Strict syntax and checksum check without allocating: exactly `prefix`, `_`, 38 base62
 * characters, and a checksum equal to the CRC-32 of everything before it. Each key has
 * one accepted spelling (fixed-width checksum, no case folding, no trimming).
 */
export function checkKey(text: string, prefix: string): KeyCheck {
  const p = prefix.length;
  if (typeof text !== 'string' || text.length !== p + 1 + BODY_LENGTH) return KEY_MALFORMED;
  if (text.charCodeAt(p) !== 95 /* _ */ || !text.startsWith(prefix)) return KEY_MALFORMED;
  const checksumStart = text.length - KEY_CHECKSUM_LENGTH;
  let checksum = 0;
  for (let i = p + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? (BASE62_VALUE[c] as number) : -1;
    if (v < 0) return KEY_MALFORMED;
    if (i >= checksumStart) checksum = checksum * 62 + v;
  }
  return checksum === crc32Ascii(text, 0, checksumStart) ? KEY_OK : KEY_BAD_CHECKSUM;
}

/**
 * Parses `text` as a key of `prefix`. `'malformed'`: not the key syntax (wrong prefix,
 * length or character); `'checksum'`: the syntax is right but the checksum is not, which
 * is a typo or a forgery, and never needs a store lookup.
 *
 * @example
 * ```ts
 * const parsed = parseKey(input, 'acme_live');
 * if (!parsed.ok) console.warn('bad key', parsed.reason);
 * ```
 */
export function parseKey(text: string, prefix: string): ParseKeyResult {
  const check = checkKey(text, prefix);
  if (check === KEY_MALFORMED) return { ok: false, reason: 'malformed' };
  if (check === KEY_BAD_CHECKSUM) return { ok: false, reason: 'checksum' };
  return { ok: true, key: { prefix, last4: text.slice(-4) } };
}

/**
 * A regular expression source that matches keys of `prefixes` anywhere in text, for
 * secret scanners (GitHub custom patterns, gitleaks, trufflehog) and log scrubbers. The
 * boundaries keep it from matching inside longer tokens; a match still needs `parseKey`
 * (the checksum) to tell a real key from a look-alike.
 *
 * @example
 * ```ts
 * const pattern = new RegExp(keyPattern(['acme_live', 'acme_test']), 'g');
 * ```
 */
export function keyPattern(prefixes: string | readonly string[]): string {
  const all = typeof prefixes === 'string' ? [prefixes] : [...prefixes];
  if (all.length === 0) throw new ConfigError('keyPattern needs at least one prefix');
  all.forEach((prefix) => assertKeyPrefix(prefix));
  // Prefixes are [a-z0-9_] only: nothing to escape.
  const alternatives = all.length === 1 ? all[0] : `(?:${all.join('|')})`;
  return `(?<![0-9A-Za-z_])${alternatives}_[0-9A-Za-z]{${BODY_LENGTH}}(?![0-9A-Za-z])`;
}
