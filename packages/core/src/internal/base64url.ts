/**
 * base64url without padding (RFC 4648 §5), strict on decode: any character outside the
 * alphabet, an impossible length or non-zero trailing bits is rejected, so every cursor
 * has exactly one accepted spelling. Written by hand because no runtime codec fits every
 * runtime core supports: `Buffer` is Node's, `atob` is neither url-safe nor strict, and
 * `Uint8Array.fromBase64` is missing from Node 20 (and from older workerd and browsers).
 * @module
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * base64url of `bytes`, unpadded.
 *
 * @example
 * ```ts
 * encodeBase64url(new Uint8Array([0xfb, 0xff])); // '-_8'
 * ```
 */
export function encodeBase64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + ALPHABET[n & 63]!;
  }
  if (i + 1 === bytes.length) {
    const n = (bytes[i] as number) << 16;
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]!;
  } else if (i + 2 === bytes.length) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]!;
  }
  return out;
}

/** The value of base64url character code `c`, or -1. */
function sextet(c: number): number {
  if (c >= 65 && c <= 90) return c - 65; // A-Z
  if (c >= 97 && c <= 122) return c - 71; // a-z
  if (c >= 48 && c <= 57) return c + 4; // 0-9
  return c === 45 ? 62 : c === 95 ? 63 : -1; // - _
}

/**
 * The bytes of strict unpadded base64url text; `undefined` for anything else.
 *
 * @example
 * ```ts
 * decodeBase64url('-_8'); // Uint8Array [0xfb, 0xff]
 * decodeBase64url('-_9'); // undefined: non-zero trailing bits
 * ```
 */
export function decodeBase64url(text: string): Uint8Array | undefined {
  const rest = text.length % 4;
  if (rest === 1) return undefined;
  const whole = text.length - rest;
  const out = new Uint8Array((whole / 4) * 3 + (rest === 0 ? 0 : rest - 1));
  let o = 0;
  // `bad` collects every sextet: one -1 makes it negative.
  let bad = 0;
  for (let i = 0; i < whole; i += 4) {
    const a = sextet(text.charCodeAt(i));
    const b = sextet(text.charCodeAt(i + 1));
    const c = sextet(text.charCodeAt(i + 2));
    const d = sextet(text.charCodeAt(i + 3));
    bad |= a | b | c | d;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = (b << 4) | (c >> 2);
    out[o++] = (c << 6) | d;
  }
  if (rest > 0) {
    const a = sextet(text.charCodeAt(whole));
    const b = sextet(text.charCodeAt(whole + 1));
    const c = rest === 3 ? sextet(text.charCodeAt(whole + 2)) : 0;
    bad |= a | b | c;
    out[o++] = (a << 2) | (b >> 4);
    if (rest === 3) out[o++] = (b << 4) | (c >> 2);
    // The bits past the last whole byte must be zero, or two texts would decode alike.
    if ((rest === 2 ? b & 15 : c & 3) !== 0) return undefined;
  }
  return bad < 0 ? undefined : out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD). */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Strict UTF-8 decode; `undefined` for invalid sequences. */
export function utf8Decode(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
