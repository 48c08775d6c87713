/**
 * Standard base64 (RFC 4648 §4, with or without `=` padding) through the strict base64url
 * decoder: GitHub sends signatures and PEM bodies in this alphabet.
 * @module
 */
import { decodeBase64url } from '../internal/base64url.ts';

/** The bytes of standard base64 `text`, or `undefined` when it is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || (text.includes('=') && text.length % 4 !== 0)) return undefined;
  return decodeBase64url(text.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
}
