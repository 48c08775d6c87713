/**
 * Node provider: `node:crypto` is synchronous and many times faster than awaiting Web
 * Crypto, which matters on the request path: a cursor page and a key check each hash.
 * Selected by the `node` condition of the `#crypto` import.
 * @module
 */
import * as nodeCryptoModule from 'node:crypto';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Buffer } from 'node:buffer';
import type { CryptoProvider } from './crypto-provider.ts';

type OneShotHash = (algorithm: string, data: string | Uint8Array, encoding: 'buffer' | 'latin1') => Buffer | string;

const BLOCK = 64; // SHA-256 block size in bytes (RFC 2104 B)
const DIGEST = 32; // SHA-256 output size (RFC 2104 L)
/** Longest message (in bytes) MACed through a key's pads; longer ones go to `createHmac`. */
const MAX_SCRATCH = 64 * 1024;

/**
 * One HMAC key's precomputed blocks (RFC 2104 §2): `inner` is K ⊕ ipad followed by room for
 * the message, `outer` is K ⊕ opad followed by room for the inner digest.
 */
interface HmacPads {
  inner: Buffer;
  readonly outer: Buffer;
}

/**
 * A `node:crypto` {@link CryptoProvider}. The provider keeps the HMAC pads of each key it
 * has been given (weakly: a key nobody holds lets its pads go), so each provider made here
 * has its own.
 *
 * @example
 * ```ts
 * const codec = createCursorCodec({ secrets: ['s3cret…'], crypto: createNodeCrypto() });
 * ```
 */
export function createNodeCrypto(): CryptoProvider {
  // `crypto.hash()` (Node ≥ 20.12, every Node keyset supports) is a documented one-shot
  // digest, about 40 % faster than createHash for short inputs. Picked by capability:
  // runtimes with a partial `node:crypto` (Bun, Deno) fall back to createHash/createHmac.
  const hash = (nodeCryptoModule as { hash?: OneShotHash }).hash;
  const pads = new WeakMap<Uint8Array, HmacPads>();

  function padsOf(key: Uint8Array, oneShot: OneShotHash): HmacPads {
    let known = pads.get(key);
    if (known === undefined) {
      // Keys longer than a block are hashed first; shorter ones are zero-padded.
      const block = Buffer.alloc(BLOCK);
      block.set(key.length > BLOCK ? (oneShot('sha256', key, 'buffer') as Buffer) : key);
      known = { inner: Buffer.alloc(256), outer: Buffer.alloc(BLOCK + DIGEST) };
      for (let i = 0; i < BLOCK; i++) {
        known.inner[i] = (block[i] as number) ^ 0x36;
        known.outer[i] = (block[i] as number) ^ 0x5c;
      }
      pads.set(key, known);
    }
    return known;
  }

  /**
   * HMAC-SHA256 as RFC 2104 defines it, H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)): two one-shot
   * hashes over the key's cached pads, no Hmac object, key import or stream per call.
   * What it buys: a cursor page runs up to three MACs, none of which builds an Hmac object
   * (`bench inprocess-ab` against a build whose MAC is `createHmac` shows the difference).
   * Bit-identical to `createHmac('sha256', key)`; the tests hold it to RFC 4231 and to
   * `createHmac` on random keys and messages.
   */
  function hmac(oneShot: OneShotHash, key: Uint8Array, message: string | Uint8Array, output: 'buffer' | 'latin1'): Buffer | string {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const room = typeof message === 'string' ? message.length * 3 : message.length;
    if (room > MAX_SCRATCH) {
      const mac = createHmac('sha256', key).update(message).digest();
      return output === 'buffer' ? mac : mac.toString('latin1');
    }
    const keyPads = padsOf(key, oneShot);
    if (keyPads.inner.length < BLOCK + room) {
      const grown = Buffer.alloc(Math.max(BLOCK + room, 2 * keyPads.inner.length));
      keyPads.inner.copy(grown, 0, 0, BLOCK);
      keyPads.inner = grown;
    }
    const { inner, outer } = keyPads;
    let length = BLOCK;
    if (typeof message === 'string') length += inner.write(message, BLOCK, 'utf8');
    else {
      inner.set(message, BLOCK);
      length += message.length;
    }
    // The inner digest as a 32-character binary string, not a Buffer: no Buffer allocated
    // per MAC only to be copied into the outer pad (`bench inprocess-ab` against a build
    // that writes a Buffer).
    outer.write(oneShot('sha256', inner.subarray(0, length), 'latin1') as string, BLOCK, 'latin1');
    return oneShot('sha256', outer, output);
  }

  return Object.freeze({
    name: 'node',
    sha256: hash
      ? (data: string): Uint8Array => hash('sha256', data, 'buffer') as Buffer
      : (data: string): Uint8Array => createHash('sha256').update(data, 'utf8').digest(),
    hmacSha256: hash
      ? (key: Uint8Array, data: string): Uint8Array => hmac(hash, key, data, 'buffer') as Buffer
      : (key: Uint8Array, data: string): Uint8Array => createHmac('sha256', key).update(data, 'utf8').digest(),
    // A 32-character string straight from the hash: no Buffer made only to be turned into
    // the same string.
    sha256Binary: hash
      ? (data: string): string => hash('sha256', data, 'latin1') as string
      : (data: string): string => createHash('sha256').update(data, 'utf8').digest('binary'),
    hmacSha256Binary: hash
      ? (key: Uint8Array, data: string): string => hmac(hash, key, data, 'latin1') as string
      : (key: Uint8Array, data: string): string => createHmac('sha256', key).update(data, 'utf8').digest('binary'),
    hmacSha256BinaryBytes: hash
      ? (key: Uint8Array, data: Uint8Array): string => hmac(hash, key, data, 'latin1') as string
      : (key: Uint8Array, data: Uint8Array): string => createHmac('sha256', key).update(data).digest('binary'),
    randomBytes(length: number): Uint8Array {
      return randomBytes(length);
    },
    timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
      return a.length === b.length && timingSafeEqual(a, b);
    },
    // Buffer's codec is native and ~6× faster than the portable one; it is lenient
    // (skips foreign characters, accepts padding), so a decode only counts when
    // re-encoding gives back the exact input.
    base64url: Object.freeze({
      encode(bytes: Uint8Array): string {
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
      },
      decode(text: string): Uint8Array | undefined {
        const bytes = Buffer.from(text, 'base64url');
        return bytes.toString('base64url') === text ? bytes : undefined;
      },
    }),
  });
}

/**
 * The `node:crypto` provider `#crypto` resolves to on Node.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store, prefix: 'acme_live', crypto: nodeCrypto });
 * ```
 */
export const nodeCrypto: CryptoProvider = createNodeCrypto();

/** The provider `#crypto` resolves to on Node. */
export const defaultCrypto: CryptoProvider = nodeCrypto;
