/**
 * Pepper rotation. A keyring takes its peppers
 * newest first: keys are issued under the newest; a key whose stored digest was made under
 * an older one still verifies, and is re-hashed under the newest once (`pepper-rehasher.ts`).
 * Each pepper has an id, a fingerprint stored beside every digest, so an operator can count
 * the digests left on an old pepper and drop it when none are.
 * @module
 */
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError } from '../errors.ts';
import { utf8Encode } from '../internal/base64url.ts';
import { toHex } from '../internal/hex.ts';
import { createRawDigest, type RawDigest } from './key-digest.ts';

/** A pepper, or `null` for plain SHA-256 digests (a keyring that had no pepper before). */
export type Pepper = string | Uint8Array | null;

/** What a pepper's id is the digest of: a fixed text no key can be (keys hold no `:`). */
const PEPPER_ID_INPUT = 'keyset:pepper-id';

/** Internal: not exported from the package. */
export interface PepperRing {
  /** One digest function per pepper, newest first; `digests[0]` issues keys. */
  readonly digests: readonly [RawDigest, ...RawDigest[]];
  /**
   * The peppers' ids, in the same order: the first 12 hex digits of the pepper's digest of
   * a fixed text (HMAC-SHA256 under the pepper, or SHA-256 for `null`). They name a pepper
   * without revealing it; computed once, on first use (the digest may be asynchronous).
   */
  ids(): Promise<readonly string[]>;
}

/**
 * Validates `peppers` (newest first) and returns their digest functions and ids. Throws
 * `ConfigError` for an empty list, a pepper shorter than 16 bytes or the same pepper twice.
 */
export function createPepperRing(peppers: readonly Pepper[], crypto: CryptoProvider, fromPeppersOption = true): PepperRing {
  if (!Array.isArray(peppers) || peppers.length === 0) {
    throw new ConfigError('peppers must be a non-empty array, newest first: [newPepper, ...olderPeppers]');
  }
  const digests = peppers.map((pepper, n) => {
    if (pepper === undefined) throw new ConfigError(`peppers[${n}] is undefined: an environment variable that is not set? Use null for plain SHA-256 digests`);
    try {
      return createRawDigest(pepper === null ? { crypto } : { crypto, pepper });
    } catch (error) {
      if (error instanceof ConfigError && fromPeppersOption) throw new ConfigError(`peppers[${n}]: ${error.message}`);
      throw error;
    }
  }) as unknown as [RawDigest, ...RawDigest[]];
  // The same pepper twice would only cost a second digest per store lookup: refuse it.
  const seen = peppers.map((pepper) => (pepper === null ? 'null' : toHex(typeof pepper === 'string' ? utf8Encode(pepper) : pepper)));
  const twice = seen.findIndex((bytes, n) => seen.indexOf(bytes) !== n);
  if (twice !== -1) throw new ConfigError(`peppers[${twice}] is the same pepper as peppers[${seen.indexOf(seen[twice]!)}]: list each pepper once`);
  let ids: Promise<readonly string[]> | undefined;
  return Object.freeze({
    digests,
    ids(): Promise<readonly string[]> {
      ids ??= Promise.all(digests.map(async (digest) => toHex(await digest(PEPPER_ID_INPUT)).slice(0, 12))).then((list) => Object.freeze(list));
      return ids;
    },
  });
}
