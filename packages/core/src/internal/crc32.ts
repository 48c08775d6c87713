/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), table-driven. Used as the API-key
 * checksum: it catches every typo of up to 32 bits and lets scanners tell a real key from
 * look-alike junk. It is not a MAC; the key's secrecy comes from its random part.
 * @module
 */

const TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c >>> 0;
}

/**
 * CRC-32 of the char codes of `text[start, end)`, which must be ASCII (one byte each,
 * the same bytes as UTF-8). Returns an unsigned 32-bit integer.
 */
export function crc32Ascii(text: string, start = 0, end: number = text.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) {
    crc = (TABLE[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
