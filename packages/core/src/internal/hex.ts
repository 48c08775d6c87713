/**
 * Lowercase hex without `Buffer` (the core imports nothing from Node).
 * @module
 */

const BYTE_TO_HEX: string[] = [];
for (let i = 0; i < 256; i++) BYTE_TO_HEX.push(i.toString(16).padStart(2, '0'));

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_TO_HEX[bytes[i] as number]!;
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
