import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { derToRawSignature } from './der-signature.ts';
import { rawToDer } from '@keyset/test-support';

describe('derToRawSignature', () => {
  it('inverts DER encoding of any r and s (leading zeros, high bits)', () => {
    const half = fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((b) => b.some((x) => x !== 0));
    fc.assert(
      fc.property(half, half, fc.nat(31), (r, s, zeros) => {
        r.fill(0, 0, zeros);
        fc.pre(r.some((x) => x !== 0)); // r and s are in [1, n-1]; zero is refused
        const raw = new Uint8Array([...r, ...s]);
        expect(derToRawSignature(rawToDer(raw), 32)).toEqual(raw);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses anything that is not exactly one minimal DER sequence of two integers', () => {
    const good = rawToDer(new Uint8Array(64).fill(0x7f));
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const bad = good.slice();
        bad[at] = (bad[at] as number) ^ xor;
        const raw = derToRawSignature(bad, 32);
        // Only the integers' digits may change and still parse (to a different signature).
        if (raw !== undefined) expect(at === 0 || at === 1 || at === 2 || at === 3 || at === 36 || at === 37).toBe(false);
      }),
    );
    expect(derToRawSignature(new Uint8Array([...good, 0]), 32)).toBeUndefined();
    expect(derToRawSignature(good.subarray(0, -1), 32)).toBeUndefined();
    expect(derToRawSignature(new Uint8Array(0), 32)).toBeUndefined();
  });
});
