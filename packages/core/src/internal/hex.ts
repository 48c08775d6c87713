/**
 * Byte encodings without `Buffer` (the core imports nothing from Node): lowercase hex for
 * digests at rest, and a one-byte-per-char string for in-memory map keys.
 * Both build flat strings (`join`, one `String.fromCharCode` call): a string grown by `+=`
 * is a rope that V8 must flatten before hashing it as a `Map` key, on every lookup of the
 * verification hot path.
 * @module
 */

const HEX = '0123456789abcdef';

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  // join builds one flat string (see the module comment).
  return Array.from(bytes, (b) => HEX[b >>> 4]! + HEX[b & 15]!).join('');
}

/** `bytes` as a string of char codes 0–255: a compact, flat `Map` key. Never shown or stored. */
export function toByteString(bytes: Uint8Array): string {
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** The bytes of a binary string (each character U+0000–U+00FF), the inverse of `toByteString`. */
export function fromByteString(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Bytes of strict lowercase hex; `undefined` for odd length or any other character. */
export function fromHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(text.charCodeAt(2 * i));
    const lo = nibble(text.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return undefined;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f
  return -1;
}
