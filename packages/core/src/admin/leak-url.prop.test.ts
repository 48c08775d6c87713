/**
 * The URL a secret-scanning alert gives is kept on the key record
 * (`leakUrl`), and it may hold the very key it reports, whole, mangled, cut short,
 * percent-encoded or lowercased (a host), anywhere in the URL.
 *
 * Property: whatever the URL, what `leakUrlOf` keeps is `null` or an http(s) URL of at
 * most 2048 characters holding no run of 8 characters of the reported key's secret (read
 * as it is, percent-decoded, and lowercased). URLs without key text are kept as the URL
 * parser writes them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyFrom, mangledKey, secretLeak } from '@keyset/test-support';
import { generateKey } from '../keys/key-format.ts';
import { isRecordableLeakUrl, leakUrlOf, MAX_LEAK_URL_LENGTH } from './leak-url.ts';

const word = fc.constantFrom('octo', 'app', 'blob', 'main', '.env', 'config.yml', 'issues', '1234', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4', 'gist', 'L12');

/** A piece of the key: whole or mangled, a slice of its secret, encoded or lowercased. */
const keyPiece = fc
  .record({ mangled: mangledKey, start: fc.nat({ max: 30 }), length: fc.integer({ min: 8, max: 38 }), form: fc.constantFrom('sent', 'slice', 'encoded', 'lower', 'upper') })
  .map(({ mangled, start, length, form }) => {
    const secret = mangled.key.slice(mangled.key.lastIndexOf('_') + 1);
    const slice = secret.slice(start, start + length);
    const piece =
      form === 'sent' ? mangled.sent
      : form === 'slice' ? slice
      : form === 'encoded' ? [...slice].map((c, i) => (i % 3 === 0 ? `%${c.charCodeAt(0).toString(16)}` : c)).join('')
      : form === 'lower' ? slice.toLowerCase()
      : slice.toUpperCase();
    return { key: mangled.key, piece };
  });

/** A URL with the key piece in the host, user info, path, query or fragment. */
const alertUrl = fc
  .record({
    scheme: fc.constantFrom('https', 'http', 'HTTPS', 'javascript', 'ftp', 'data'),
    where: fc.constantFrom('host', 'user', 'path', 'query', 'fragment', 'nowhere'),
    before: fc.array(word, { maxLength: 4 }),
    after: fc.array(word, { maxLength: 4 }),
    glue: fc.constantFrom('', '-', '_', '.', 'x'),
    key: keyPiece,
  })
  .map(({ scheme, where, before, after, glue, key }) => {
    const p = key.piece;
    const path = [...before, where === 'path' ? `${glue}${p}${glue}` : 'file', ...after].join('/');
    const host = where === 'host' ? `${p}${glue}.example.com` : 'github.com';
    const user = where === 'user' ? `${p}:x@` : '';
    const query = where === 'query' ? `?token=${glue}${p}` : '';
    const fragment = where === 'fragment' ? `#${p}${glue}` : '';
    return { key: key.key, url: `${scheme}://${user}${host}/${path}${query}${fragment}` };
  });

describe('leakUrlOf', () => {
  it('keeps no 8 characters of the reported key, wherever the URL holds them', () => {
    fc.assert(
      fc.property(alertUrl, ({ key, url }) => {
        const kept = leakUrlOf(url, key);
        if (kept === null) return;
        expect(secretLeak(kept, [key])).toBeUndefined();
        expect(isRecordableLeakUrl(kept)).toBe(true);
        expect(kept.length).toBeLessThanOrEqual(MAX_LEAK_URL_LENGTH);
        expect(kept).toMatch(/^https?:\/\//);
        // Safe to show as it is: no markup, quote, space, control or bidirectional character.
        expect(kept).not.toMatch(/[<>"'`\s\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps a URL without key text as the URL parser writes it', () => {
    const key = keyFrom('ks_live', 7);
    for (const url of [
      'https://github.com/octo/app/blob/e3b0c44298fc1c149afbf4c8996fb92427ae41e4/config/.env#L12',
      'https://gist.github.com/octo/0123456789abcdef0123456789abcdef',
      'http://example.com/issues/42?tab=comments',
    ]) {
      expect(leakUrlOf(url, key)).toBe(new URL(url).href);
    }
  });

  it('records nothing for what is not an absolute http(s) URL of at most 2048 characters', () => {
    const key = generateKey('ks_live');
    for (const url of [undefined, 42, '', 'github.com/o/r', '/o/r', 'javascript:alert(1)', 'data:text/plain,x', 'ftp://example.com/x', `https://github.com/${'a/'.repeat(1030)}`]) {
      expect(leakUrlOf(url, key)).toBeNull();
    }
  });

  it('drops the user name and password, and cuts a key down to its last 4 characters', () => {
    const key = keyFrom('ks_live', 11);
    expect(leakUrlOf('https://me:secret@github.com/o/r', key)).toBe('https://github.com/o/r');
    expect(leakUrlOf(`https://github.com/o/r/blob/main/${key}.txt`, key)).toBe(`https://github.com/o/r/blob/main/…${key.slice(-4)}.txt`);
    // A key cut to 20 characters has no key shape: the whole URL's long runs are cut instead.
    const cut = key.slice(8, 28);
    const kept = leakUrlOf(`https://github.com/octo/repository/blob/main/${cut}`, key);
    expect(kept).toBe(`https://github.com/octo/rep…tory/blob/main/${cut.slice(0, 3)}…${cut.slice(-4)}`);
  });

  it('text the cutting decoded is encoded again: markup in a URL with a cut key is never kept as markup', () => {
    const key = keyFrom('ks_live', 13);
    const secret = key.slice(key.lastIndexOf('_') + 1);
    const kept = leakUrlOf(`https://github.com/o/r/${secret.slice(0, 10)}/%3Cimg%20src=x%20onerror=alert(1)%3E'%22`, key);
    expect(kept).not.toBeNull();
    expect(kept).not.toMatch(/[<>"' ]/);
    expect(kept).toContain('%3Cimg%20src=x%20onerror=alert(1)%3E%27%22');
    expect(secretLeak(kept!, [key])).toBeUndefined();
  });

  it('isRecordableLeakUrl refuses what leakUrlOf never gives', () => {
    const key = generateKey('ks_live');
    expect(isRecordableLeakUrl('https://github.com/o/r')).toBe(true);
    for (const url of [null, 'ftp://x', 'https://', 'https://a/\n', `https://a/${key}`, `https://a/${'x'.repeat(2040)}`, 'https://a/<b>', 'https://a/b c', "https://a/b'c", 'https://a/\u009b31m', 'https://a/\u202eabc']) {
      expect(isRecordableLeakUrl(url)).toBe(false);
    }
  });
});
