import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from '../internal/base64url.ts';
import { nodeCrypto } from './crypto.node.ts';
import { webCrypto } from './crypto.web.ts';

const native = nodeCrypto.base64url!;
// Strings near the alphabet, so canonical and almost-canonical inputs both occur often.
const near = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ .%\u00e9'), maxLength: 40 });

describe('node provider base64url', () => {
  it('encodes exactly like the portable codec', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(native.encode(bytes)).toBe(encodeBase64url(bytes));
      }),
    );
  });

  it('accepts and rejects exactly what the strict portable decoder does', () => {
    fc.assert(
      fc.property(near, (text) => {
        const a = native.decode(text);
        const b = decodeBase64url(text);
        expect(a === undefined).toBe(b === undefined);
        if (a !== undefined && b !== undefined) expect(Array.from(a)).toEqual(Array.from(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects padding, the standard alphabet and non-zero trailing bits', () => {
    expect(native.decode('QQ==')).toBeUndefined();
    expect(native.decode('a+b/')).toBeUndefined();
    expect(native.decode('QR')).toBeUndefined(); // 'QQ' is the canonical spelling of 0x41
    expect(Array.from(native.decode('QQ')!)).toEqual([0x41]);
  });
});

describe('node and web providers agree', () => {
  it('on SHA-256 and HMAC-SHA256', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.uint8Array({ minLength: 1, maxLength: 64 }), async (data, key) => {
        expect(Array.from(nodeCrypto.sha256(data) as Uint8Array)).toEqual(Array.from(await webCrypto.sha256(data)));
        expect(Array.from(nodeCrypto.hmacSha256(key, data) as Uint8Array)).toEqual(Array.from(await webCrypto.hmacSha256(key, data)));
      }),
      { numRuns: 200 },
    );
  });
});
