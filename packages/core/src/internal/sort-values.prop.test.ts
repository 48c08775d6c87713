/** The in-memory string order must be the order a "C" collation (PostgreSQL) or BINARY (SQLite) gives: UTF-8 byte order. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SortKey } from '../pagination/types.ts';
import { compareKey, toComparable } from './sort-values.ts';

const key: SortKey = { key: 'v', dir: 'asc', type: 'string', nullable: false };
const utf8 = new TextEncoder();

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

describe('string sort values', () => {
  it('compare in UTF-8 byte order (= code point order), like COLLATE "C" and SQLite BINARY', () => {
    // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 code unit.
    expect(compareKey(key, toComparable('string', '\uFF5E'), toComparable('string', '\u{1F600}'))).toBe(-1);
    const unit = fc.oneof(fc.constantFrom('a', 'z', '\u00e9', '\uE000', '\uFF5E', '\uFFFF', '\u{10000}', '\u{1F600}', '\u{10FFFF}'), fc.string({ unit: 'binary', maxLength: 1 }));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 6 }).map((u) => u.join('')), fc.array(unit, { maxLength: 6 }).map((u) => u.join('')), (a, b) => {
        expect(compareKey(key, a, b)).toBe(compareBytes(utf8.encode(a), utf8.encode(b)));
      }),
      { numRuns: 2000 },
    );
  });
});
