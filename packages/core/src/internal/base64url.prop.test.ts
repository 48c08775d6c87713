/**
 * base64url against Node's own codec (Buffer, test-only here): the same text for any
 * bytes, and for any text the same bytes when it is the one canonical unpadded spelling
 * of them, `undefined` otherwise (padding, the standard alphabet, whitespace, foreign
 * characters, a 4n+1 length, non-zero trailing bits).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from './base64url.ts';

/** What strict base64url decoding must answer: Buffer decodes leniently, so only its canonical input counts. */
function expected(text: string): Uint8Array | undefined {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? new Uint8Array(bytes) : undefined;
}

const near = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \n.\u00e9\u0100\u0141'), maxLength: 40 });
/** The encoding of some bytes with one character replaced, inserted or deleted, sometimes. */
const edited = fc.tuple(fc.uint8Array({ maxLength: 40 }), fc.nat(), fc.constantFrom('replace', 'insert', 'delete', 'none'), fc.constantFrom(...'AQgw-_+/=9z \u0100')).map(([bytes, at, kind, c]) => {
  const text = Buffer.from(bytes).toString('base64url');
  const i = at % (text.length + 1);
  if (kind === 'replace') return text.slice(0, i) + c + text.slice(i + 1);
  if (kind === 'insert') return text.slice(0, i) + c + text.slice(i);
  if (kind === 'delete') return text.slice(0, i) + text.slice(i + 1);
  return text;
});

describe('base64url', () => {
  it('encodes as Buffer does, and decodes its own output back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = encodeBase64url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(decodeBase64url(text)).toEqual(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it('decodes exactly the canonical spellings, to the same bytes', () => {
    fc.assert(
      fc.property(fc.oneof(near, edited, fc.string({ unit: 'binary', maxLength: 20 })), (text) => {
        expect(decodeBase64url(text)).toEqual(expected(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses non-zero trailing bits, padding and a 4n+1 length', () => {
    expect(decodeBase64url('-_8')).toEqual(new Uint8Array([0xfb, 0xff]));
    for (const text of ['-_9', 'AB', 'AAB', 'AA==', 'AAA=', 'A', 'AAAAA', 'AA AA', 'A+/A']) expect(decodeBase64url(text)).toBeUndefined();
    expect(decodeBase64url('')).toEqual(new Uint8Array(0));
  });
});
