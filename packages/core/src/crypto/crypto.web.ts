/**
 * Web Crypto provider: browsers, Deno, Bun, Cloudflare Workers, and Node when chosen
 * explicitly. HMAC keys are imported once per key and cached.
 * @module
 */
import { constantTimeEqual, type CryptoProvider } from './crypto-provider.ts';

const encoder = new TextEncoder();

/**
 * A Web Crypto {@link CryptoProvider}. Each HMAC key is imported once and its `CryptoKey`
 * kept by the provider (weakly: a key nobody holds lets its import go).
 *
 * @example
 * ```ts
 * const codec = createCursorCodec({ secrets: ['s3cret…'], crypto: createWebCrypto() });
 * ```
 */
export function createWebCrypto(): CryptoProvider {
  const imported = new WeakMap<Uint8Array, Promise<CryptoKey>>();

  function hmacKey(key: Uint8Array): Promise<CryptoKey> {
    let cryptoKey = imported.get(key);
    if (cryptoKey === undefined) {
      cryptoKey = crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      imported.set(key, cryptoKey);
    }
    return cryptoKey;
  }

  return Object.freeze({
    name: 'web',
    async sha256(data: string): Promise<Uint8Array> {
      return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(data)));
    },
    async hmacSha256(key: Uint8Array, data: string): Promise<Uint8Array> {
      return new Uint8Array(await crypto.subtle.sign('HMAC', await hmacKey(key), encoder.encode(data)));
    },
    randomBytes(length: number): Uint8Array {
      return crypto.getRandomValues(new Uint8Array(length));
    },
    timingSafeEqual: constantTimeEqual,
  });
}

/**
 * The Web Crypto provider `#crypto` resolves to outside Node; on Node, pass it as
 * `crypto` to use Web Crypto instead of `node:crypto`.
 *
 * @example
 * ```ts
 * const codec = createCursorCodec({ secrets: ['s3cret…'], crypto: webCrypto });
 * ```
 */
export const webCrypto: CryptoProvider = createWebCrypto();

/** The provider `#crypto` resolves to outside Node. */
export const defaultCrypto: CryptoProvider = webCrypto;
