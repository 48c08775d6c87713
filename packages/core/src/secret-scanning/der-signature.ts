/**
 * ECDSA signatures come two ways: DER (`SEQUENCE { INTEGER r, INTEGER s }`, what GitHub
 * sends, RFC 3279 §2.2.3) and raw `r || s` (IEEE P1363, what Web Crypto's `verify` takes).
 * This converts one to the other, strictly: anything but one well-formed DER sequence of
 * two positive integers that fit the curve is `undefined`, never a guess.
 * @module
 */

/**
 * The raw `r || s` form (`2 × size` bytes) of a DER ECDSA signature, or `undefined` when
 * `der` is not one. `size` is the curve's field size in bytes (32 for P-256).
 *
 * @example
 * ```ts
 * const raw = derToRawSignature(der, 32); // Uint8Array(64) | undefined
 * ```
 */
export function derToRawSignature(der: Uint8Array, size: number): Uint8Array<ArrayBuffer> | undefined {
  // Short-form lengths only: a P-256 or P-384 signature is under 128 bytes.
  if (der.length < 8 || der[0] !== 0x30 || der[1] !== der.length - 2) return undefined;
  const raw = new Uint8Array(2 * size);
  let at = 2;
  for (let part = 0; part < 2; part++) {
    if (der[at] !== 0x02) return undefined;
    const length = der[at + 1] ?? 0;
    const start = at + 2;
    const end = start + length;
    if (length === 0 || end > der.length) return undefined;
    // DER integers are minimal and signed: a leading 0x00 only before a byte >= 0x80, and
    // r and s are positive.
    if ((der[start] as number) & 0x80) return undefined;
    if (der[start] === 0 && (length === 1 || ((der[start + 1] as number) & 0x80) === 0)) return undefined;
    const digits = der[start] === 0 ? der.subarray(start + 1, end) : der.subarray(start, end);
    if (digits.length > size) return undefined;
    raw.set(digits, part * size + size - digits.length);
    at = end;
  }
  return at === der.length ? raw : undefined;
}
