/**
 * Where `redactKey` and `safeLast4` draw their lines: 15 characters show nothing and 16
 * show the last 4; a non-string is `…`, never a crash in a log call; and the last 4 never
 * start with the second half of a surrogate pair (3 are shown then, never 5).
 */
import { describe, expect, it } from 'vitest';
import { redactKey, safeLast4 } from './redact-key.ts';

const KEY = 'acme_live_0123456789abcdefghijABCDEFGHIJ1a2B3c';

describe('redactKey edges', () => {
  it('shows the last 4 characters of a key after `…`', () => {
    expect(redactKey(KEY)).toBe('…2B3c');
  });

  it('shows only `…` for 15 characters and the last 4 from 16', () => {
    expect(redactKey('abcdefghijklmno')).toBe('…');
    expect(redactKey('abcdefghijklmnop')).toBe('…mnop');
    expect(redactKey('')).toBe('…');
  });

  it.each([undefined, null, 1234567890123456789, ['abcdefghijklmnopqrst'], { length: 20 }])('shows only `…` for the non-string %j', (value) => {
    expect(redactKey(value)).toBe('…');
  });
});

describe('safeLast4 edges', () => {
  it('is undefined for 15 characters and the last 4 from 16', () => {
    expect(safeLast4('abcdefghijklmno')).toBeUndefined();
    expect(safeLast4('abcdefghijklmnop')).toBe('mnop');
    expect(safeLast4(KEY)).toBe('2B3c');
  });
});

describe('the last 4 next to a surrogate pair', () => {
  const pad = 'x'.repeat(12);

  it.each([
    ['U+10000 (second half \\uDC00)', '\uD800\uDC00'],
    ['U+1F600 (second half \\uDE00)', '😀'],
    ['U+10FFFF (second half \\uDFFF)', '\uDBFF\uDFFF'],
  ])('shows 3 characters when the 4th from the end is the second half of %s', (_name, pair) => {
    const text = `${pad}${pair}abc`;
    expect(redactKey(text)).toBe('…abc');
    expect(safeLast4(text)).toBe('abc');
  });

  it('shows a whole pair that starts 4 from the end, and 4 characters next to U+E000', () => {
    expect(redactKey(`${pad}😀ab`)).toBe('…😀ab');
    expect(redactKey(`${pad}\uE000abc`)).toBe('…\uE000abc');
  });
});
