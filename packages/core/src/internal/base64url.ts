/**
 * base64url without padding (RFC 4648 §5), strict on decode: any character outside the
 * alphabet, an impossible length or non-zero trailing bits is rejected, so every cursor
 * has exactly one accepted spelling. Written by hand because the core must not use
 * `Buffer` and `atob` is neither url-safe nor strict.
 * @module
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

export function encodeBase64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]!;
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]!;
  }
  return out;
}

/** Decodes strict unpadded base64url; `undefined` for anything else. */
export function decodeBase64url(text: string): Uint8Array | undefined {
  const len = text.length;
  if (len % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let o = 0;
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? (LOOKUP[c] as number) : -1;
    if (v < 0) return undefined;
    buffer = ((buffer << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (buffer >>> bits) & 0xff;
    }
  }
  // Leftover bits must be zero, or two strings would decode to the same bytes.
  if (bits > 0 && (buffer & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

/** Each byte's sextet, -1 for a byte outside the alphabet. */
const SEXTET = new Int8Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * {@link decodeBase64url} into `target` from its start: the number of bytes written, or -1
 * for exactly the text `decodeBase64url` refuses. `target` needs `text.length` bytes: the
 * text is first copied into it as ASCII by the runtime's `TextEncoder.encodeInto`, then
 * decoded where it stands (each group of four characters becomes three bytes at or before
 * them), so the characters are read from bytes, not with `charCodeAt`: a cursor taken from
 * a query string is a V8 sliced string, whose every `charCodeAt` unwraps it again. Bytes
 * past what it returns are overwritten. A character past ASCII makes the UTF-8 longer than
 * the text, and none is in the alphabet: -1.
 */
export function decodeBase64urlInPlace(text: string, target: Uint8Array): number {
  const len = text.length;
  const rest = len & 3;
  if (rest === 1 || target.length < len) return -1;
  const copied = encoder.encodeInto(text, target);
  if (copied.read !== len || copied.written !== len) return -1;
  const whole = len - rest;
  let o = 0;
  // `bad` collects every sextet: -1 for a byte outside the alphabet makes it negative.
  let bad = 0;
  for (let i = 0; i < whole; i += 4) {
    const a = SEXTET[target[i] as number] as number;
    const b = SEXTET[target[i + 1] as number] as number;
    const c = SEXTET[target[i + 2] as number] as number;
    const d = SEXTET[target[i + 3] as number] as number;
    bad |= a | b | c | d;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    target[o] = n >> 16;
    target[o + 1] = n >> 8;
    target[o + 2] = n;
    o += 3;
  }
  if (rest !== 0) {
    const a = SEXTET[target[whole] as number] as number;
    const b = SEXTET[target[whole + 1] as number] as number;
    bad |= a | b;
    if (rest === 2) {
      // Leftover bits must be zero, or two strings would decode to the same bytes.
      if ((b & 15) !== 0) return -1;
      target[o++] = (a << 2) | (b >> 4);
    } else {
      const c = SEXTET[target[whole + 2] as number] as number;
      bad |= c;
      if ((c & 3) !== 0) return -1;
      target[o++] = (a << 2) | (b >> 4);
      target[o++] = (b << 4) | (c >> 2);
    }
  }
  return bad < 0 ? -1 : o;
}

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
