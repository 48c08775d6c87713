import { describe, expect, it } from 'vitest';
import { canonicalJson } from './cursor-fingerprint.ts';

describe('canonicalJson', () => {
  it('sorts keys and keeps types apart', () => {
    expect(canonicalJson({ b: 1, a: '1' })).toBe(canonicalJson({ a: '1', b: 1 }));
    expect(canonicalJson({ a: 5n })).not.toBe(canonicalJson({ a: '5' }));
    expect(canonicalJson(Object.assign(Object.create(null) as object, { a: 1 }))).toBe(canonicalJson({ a: 1 }));
  });

  it('refuses objects whose contents Object.keys cannot see, instead of fingerprinting them all as {}', () => {
    // new Set([1]) and new Set([2]) both had the text "{}": a cursor issued for one filter
    // set verified for the other.
    for (const value of [new Set([1]), new Map([['a', 1]]), /paid/, new URL('https://example.com/'), new (class Status {})()]) {
      expect(() => canonicalJson({ status: value })).toThrow(TypeError);
    }
  });
});
