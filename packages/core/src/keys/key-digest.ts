/**
 * What a store keeps instead of the key: lowercase hex SHA-256 of the key string, or
 * HMAC-SHA256 under a server-side pepper (then a stolen database alone cannot even
 * confirm a guessed key). Keys carry ~190 random bits, so a fast hash is the right tool:
 * bcrypt/argon2 protect low-entropy passwords and would only put milliseconds on every
 * request.
 * @module
 */
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError } from '../errors.ts';
import { utf8Encode } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { toHex } from '../internal/hex.ts';

/** Minimum pepper length in bytes: below 128 bits a pepper adds little. */
const MIN_PEPPER_BYTES = 16;

/** Options of `digestKey`. */
export interface DigestKeyOptions {
  /** Server secret: the digest becomes HMAC-SHA256(pepper, key). At least 16 bytes. */
  pepper?: string | Uint8Array | undefined;
  /** @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere) */
  crypto?: CryptoProvider;
}

/** Every name `DigestKeyOptions` knows, checked on each call (a misspelt `pepper` would digest without it). */
const DIGEST_OPTIONS = { pepper: true, crypto: true } as const satisfies KnownOptions<DigestKeyOptions>;

/**
 * Raw-digest function for a keyring: one closure, no per-call option handling. `binary`,
 * when the provider offers it, gives the same digest as a binary string (one character
 * per byte), synchronously: the verification cache's key, with no byte array on a hit.
 */
export type RawDigest = ((key: string) => Uint8Array | Promise<Uint8Array>) & { binary?: (key: string) => string };

/** Validates the pepper and returns the raw digest function. Throws `ConfigError`. */
export function createRawDigest(options: DigestKeyOptions = {}): RawDigest {
  const { pepper, crypto = defaultCrypto } = options;
  if (pepper === undefined) {
    const digest: RawDigest = (key) => crypto.sha256(key);
    const { sha256Binary } = crypto;
    if (typeof sha256Binary === 'function') digest.binary = (key) => sha256Binary.call(crypto, key);
    return digest;
  }
  const pepperBytes = typeof pepper === 'string' ? utf8Encode(pepper) : pepper instanceof Uint8Array ? Uint8Array.from(pepper) : undefined;
  if (pepperBytes === undefined || pepperBytes.length < MIN_PEPPER_BYTES) {
    throw new ConfigError(`pepper must be a string or Uint8Array of at least ${MIN_PEPPER_BYTES} bytes (generate 32 random bytes once and keep them in your secret store)`);
  }
  const digest: RawDigest = (key) => crypto.hmacSha256(pepperBytes, key);
  const { hmacSha256Binary } = crypto;
  if (typeof hmacSha256Binary === 'function') digest.binary = (key) => hmacSha256Binary.call(crypto, pepperBytes, key);
  return digest;
}

/**
 * The digest a store keeps for `key`: lowercase hex SHA-256, or HMAC-SHA256 with `pepper`.
 * Useful for importing keys or writing a store's tests; the keyring does this itself.
 *
 * @example
 * ```ts
 * const digest = await digestKey(key, { pepper: serverPepper });
 * ```
 */
export async function digestKey(key: string, options: DigestKeyOptions = {}): Promise<string> {
  assertKnownOptions('digestKey', options, DIGEST_OPTIONS);
  return toHex(await createRawDigest(options)(key));
}
