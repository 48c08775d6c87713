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
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, bytes.length - i + 1);
    for (let k = 0; k < chars; k++) out += ALPHABET[(n >>> (18 - 6 * k)) & 63];
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
  const out = new Uint8Array(((text.length - rest) / 4) * 3 + (rest === 0 ? 0 : rest - 1));
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const chars = Math.min(4, text.length - i);
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const v = k < chars ? sextet(text.charCodeAt(i + k)) : 0;
      if (v < 0) return undefined;
      n = (n << 6) | v;
    }
    // The bits past the last whole byte must be zero, or two texts would decode alike.
    if ((chars === 2 && (n & 0xffff) !== 0) || (chars === 3 && (n & 0xff) !== 0)) return undefined;
    for (let k = 0; k < chars - 1; k++) out[o++] = (n >>> (16 - 8 * k)) & 0xff;
  }
  return out;
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
