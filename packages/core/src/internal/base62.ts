/**
 * Base62 (`0-9A-Za-z`) for API keys and ids: random strings sampled without bias, and
 * fixed-width encoding of small integers (the key checksum). Base62 keeps keys free of
 * characters that URL-encoding, shells or double-click selection would split on.
 * @module
 */

/** The alphabet, in ASCII order. */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Char code → digit value, or -1. Only ASCII is ever looked up. */
export const BASE62_VALUE: Int8Array = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE62_ALPHABET.length; i++) BASE62_VALUE[BASE62_ALPHABET.charCodeAt(i)] = i;

/**
 * 248 = 4 × 62 is the largest multiple of 62 that fits in a byte. Bytes at or above it
 * are rejected, so every remaining byte maps onto each digit exactly 4 times: `byte % 62`
 * over all 256 values would favour the first 8 digits (5/256 instead of 4/256).
 */
const REJECT_FROM = 248;

/**
 * `length` base62 characters from `randomBytes` (a CSPRNG), uniformly distributed.
 * Rejection sampling: about 3 % of bytes are discarded, so a few spare bytes are drawn.
 */
export function randomBase62(randomBytes: (length: number) => Uint8Array, length: number): string {
  let out = '';
  while (out.length < length) {
    const need = length - out.length;
    const bytes = randomBytes(need + 4 + (need >>> 3));
    for (let i = 0; i < bytes.length && out.length < length; i++) {
      const b = bytes[i] as number;
      if (b < REJECT_FROM) out += BASE62_ALPHABET[b % 62];
    }
  }
  return out;
}

/** `value` (a non-negative safe integer) as exactly `width` base62 digits, zero-padded. */
export function encodeBase62Fixed(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET[rest % 62]! + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}
