import { describe, expect, it } from 'vitest';
import { fromHex, toByteString, toHex } from './hex.ts';

describe('hex', () => {
  it('round-trips and is strict lowercase', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff);
    expect(toHex(bytes)).toBe(Buffer.from(bytes).toString('hex'));
    expect(fromHex(toHex(bytes))).toEqual(bytes);
    expect(fromHex('ABCD')).toBeUndefined();
    expect(fromHex('abc')).toBeUndefined();
    expect(fromHex('zz')).toBeUndefined();
    expect(toHex(new Uint8Array())).toBe('');
  });

  it('byte strings are one char per byte', () => {
    expect(toByteString(Uint8Array.of(0, 255, 65))).toBe('\u0000\u00ffA');
  });
});
