import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BASE62_ALPHABET, randomBase62 } from '../internal/base62.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { generateKey, parseKey } from './key-format.ts';
import { redactUrl } from '../auth/query-credentials.ts';
import { redactKey } from '../redaction/redact-key.ts';

const prefixArb = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,5}){0,2}$/);
/** A key from fast-check's bytes (so failures replay by seed) through the real generator. */
const keyArb = fc.tuple(prefixArb, fc.uint8Array({ minLength: 64, maxLength: 64 })).map(([prefix, bytes]) => {
  let pool = bytes;
  const crypto = {
    ...defaultCrypto,
    randomBytes(n: number): Uint8Array {
      // Recycle the seeded pool; rejection sampling may ask for more than 64 bytes.
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = pool[i % pool.length] as number;
      pool = pool.map((b) => (b * 31 + 7) & 0xff);
      return out;
    },
  };
  return { prefix, key: generateKey(prefix, { crypto }) };
});

function windows(text: string, size = 5): string[] {
  const out: string[] = [];
  for (let i = 0; i + size <= text.length; i++) out.push(text.slice(i, i + size));
  return out;
}

describe('key format properties', () => {
  it('every generated key parses, with its checksum, under its own prefix', () => {
    fc.assert(
      fc.property(keyArb, ({ prefix, key }) => {
        const parsed = parseKey(key, prefix);
        expect(parsed.ok).toBe(true);
        expect(key.length).toBe(prefix.length + 39);
      }),
    );
  });

  it('any single-character change is refused by parse (malformed or checksum)', () => {
    fc.assert(
      fc.property(keyArb, fc.nat(), fc.integer({ min: 0x21, max: 0x7e }), ({ prefix, key }, at, code) => {
        const i = at % key.length;
        const replacement = String.fromCharCode(code);
        fc.pre(key[i] !== replacement);
        const changed = key.slice(0, i) + replacement + key.slice(i + 1);
        const parsed = parseKey(changed, prefix);
        expect(parsed.ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('swapping two adjacent different characters of the body is refused', () => {
    fc.assert(
      fc.property(keyArb, fc.nat(), ({ prefix, key }, at) => {
        const start = prefix.length + 1;
        const i = start + (at % (key.length - start - 1));
        fc.pre(key[i] !== key[i + 1]);
        const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
        expect(parseKey(swapped, prefix).ok).toBe(false);
      }),
    );
  });

  it('redactKey never shows more than 4 characters of a key', () => {
    fc.assert(
      fc.property(keyArb, ({ key }) => {
        const shown = redactKey(key);
        expect(shown).toBe(`…${key.slice(-4)}`);
        for (const w of windows(key)) expect(shown).not.toContain(w);
      }),
    );
  });

  it('redactUrl removes every 5-character window of a key, wherever it sits in the URL', () => {
    const placement = fc.constantFrom('path', 'named', 'value', 'name', 'fragment', 'embedded', 'encoded');
    fc.assert(
      fc.property(keyArb, placement, fc.webSegment(), ({ key }, where, segment) => {
        // The unrelated parameter must not hold key text of its own (fast-check once drew
        // `pply_` beside an `apply_…` key): what the check finds must come from the key.
        const added = encodeURIComponent(segment);
        fc.pre(windows(key).every((w) => !segment.includes(w) && !added.includes(w)));
        const url = {
          path: `https://api.example.com/v1/${key}/x?limit=5`,
          named: `/api/orders?API_KEY=${key}&limit=5`,
          value: `/api/orders?token=${key}`,
          name: `/api/orders?${key}`,
          fragment: `/api/orders?limit=5#${key}`,
          embedded: `/cb?next=${encodeURIComponent(`https://x.test/?k=${key}`)}`,
          encoded: `/api/orders?t=${encodeURIComponent(key).replace(/_/g, '%5F')}`,
        }[where];
        const redacted = redactUrl(`${url}${url.includes('?') ? '&' : '?'}s=${added}`);
        for (const w of windows(key)) expect(redacted).not.toContain(w);
      }),
    );
  });

  it('random characters are close to uniform (chi-square over 62 bins)', () => {
    const counts = new Array<number>(62).fill(0);
    const n = 62 * 2000;
    const text = randomBase62((k) => defaultCrypto.randomBytes(k), n);
    for (let i = 0; i < n; i++) counts[BASE62_ALPHABET.indexOf(text[i] as string)]!++;
    const expected = n / 62;
    const chi2 = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 61 degrees of freedom: P(chi2 > 110) < 1e-4. A modulo bias (5/256 vs 4/256 on
    // 8 digits) would give chi2 in the hundreds at this sample size.
    expect(chi2).toBeLessThan(110);
  });
});
