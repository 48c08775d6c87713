/**
 * The one seam between keyset's logic and a runtime's cryptography. Node gets
 * `node:crypto` (synchronous, nothing to await per digest); every other runtime gets Web Crypto.
 * The choice is made by the `#crypto` import condition in package.json, never by
 * runtime sniffing in logic. Results may be synchronous or promises: callers `await`.
 * @module
 */

/** What keyset needs from a runtime's cryptography. */
export interface CryptoProvider {
  /** Short name for diagnostics, e.g. `'node'` or `'web'`. */
  readonly name: string;
  /** SHA-256 digest of the UTF-8 bytes of `data`. */
  sha256(data: string): Uint8Array | Promise<Uint8Array>;
  /** HMAC-SHA256 of the UTF-8 bytes of `data` under `key`. */
  hmacSha256(key: Uint8Array, data: string): Uint8Array | Promise<Uint8Array>;
  /**
   * Optional: {@link CryptoProvider.sha256} as a binary string (one character per byte,
   * U+0000–U+00FF), synchronously. keyset keys its verification cache by the digest; a
   * provider that can hand the digest over as a string saves a byte array and its
   * conversion on every request.
   */
  sha256Binary?(data: string): string;
  /** Optional: {@link CryptoProvider.hmacSha256} as a binary string, synchronously (see `sha256Binary`). */
  hmacSha256Binary?(key: Uint8Array, data: string): string;
  /**
   * Optional: HMAC-SHA256 of the bytes `data` (not text) under `key`, as a binary string,
   * synchronously. The cursor codec signs and verifies the bytes it holds (a decoded
   * cursor, an encoded payload) without turning them into text and back.
   */
  hmacSha256BinaryBytes?(key: Uint8Array, data: Uint8Array): string;
  /** `length` bytes from a CSPRNG. */
  randomBytes(length: number): Uint8Array;
  /** Constant-time equality; `false` for different lengths. */
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  /**
   * Optional native base64url (RFC 4648 §5, no padding). Decoding must be strict: any
   * input that is not the canonical encoding of some bytes yields `undefined`.
   * Without it, keyset uses its portable implementation.
   */
  base64url?: {
    encode(bytes: Uint8Array): string;
    decode(text: string): Uint8Array | undefined;
  };
}

/** Constant-time comparison written once, for providers without a native one. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
