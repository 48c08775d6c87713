/**
 * Web Crypto provider: browsers, Deno, Bun, Cloudflare Workers, and Node when chosen
 * explicitly. HMAC keys are imported once per key and cached.
 * @module
 */
import { constantTimeEqual, type CryptoProvider } from './crypto-provider.ts';

const encoder = new TextEncoder();
const hmacKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function hmacKey(key: Uint8Array): Promise<CryptoKey> {
  let imported = hmacKeys.get(key);
  if (imported === undefined) {
    imported = crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    hmacKeys.set(key, imported);
  }
  return imported;
}

/**
 * Web Crypto implementation of {@link CryptoProvider}.
 *
 * @example
 * ```ts
 * const codec = createCursorCodec({ secrets: ['s3cret…'], crypto: webCrypto });
 * ```
 */
export const webCrypto: CryptoProvider = Object.freeze({
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

/** The provider `#crypto` resolves to outside Node. */
export const defaultCrypto: CryptoProvider = webCrypto;
