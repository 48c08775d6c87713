/**
 * `pageLinks` builds the `Link` header with plain string edits. This holds it to the
 * array-and-join version it replaced (kept below, verbatim in what it returns) on random
 * queries: repeated, empty, encoded and credential-free parameters, the position
 * parameter anywhere or absent, the other mode's parameter, fragments, and every mix of
 * next/prev/first targets. Failures print a seed and path: replay with
 * fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageLinks, type PageLinkTarget } from './page-links.ts';

function paramName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** The previous implementation's fast path (URLs that need no escaping). */
function previous(text: string, targets: readonly PageLinkTarget[]): string {
  const hash = text.indexOf('#');
  const withoutHash = hash < 0 ? text : text.slice(0, hash);
  const q = withoutHash.indexOf('?');
  const path = q < 0 ? withoutHash : withoutHash.slice(0, q);
  const parts: [string, string][] = [];
  if (q >= 0) {
    for (const part of withoutHash.slice(q + 1).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      parts.push([part, paramName(eq < 0 ? part : part.slice(0, eq))]);
    }
  }
  let header = '';
  for (const target of targets) {
    const { name, value } = target;
    const other = name === 'cursor' ? 'offset' : 'cursor';
    const position = value === null ? null : `${name}=${value}`;
    const kept: string[] = [];
    let placed = position === null;
    for (const [part, key] of parts) {
      if (key === other) continue;
      if (key !== name) kept.push(part);
      else if (!placed) {
        kept.push(position as string);
        placed = true;
      }
    }
    if (!placed) kept.push(position as string);
    if (header !== '') header += ', ';
    header += `<${kept.length === 0 ? path : `${path}?${kept.join('&')}`}>; rel="${target.rel}"`;
  }
  return header;
}

const name = fc.constantFrom('cursor', 'offset', 'limit', 'status', 'sort', 'a', 'curs%6Fr', 'off+set', '%zz', '');
const value = fc.constantFrom('', 'x', 'AnsiZCI6ImYi', '20', 'paid', '-createdAt,id', '%41', 'a+b');
const part = fc.oneof(fc.tuple(name, value).map(([n, v]) => `${n}=${v}`), name, fc.constant(''));
const target: fc.Arbitrary<PageLinkTarget> = fc.record({
  rel: fc.constantFrom('next', 'prev', 'first'),
  name: fc.constantFrom('cursor', 'offset'),
  value: fc.option(fc.constantFrom('Abc-_0', '40', '0', 'AnsiZCI6ImYiLCJwIjpb'), { nil: null }),
}) as fc.Arbitrary<PageLinkTarget>;

const KEEP_ALL = (): boolean => true;

/** `url` without the query parameters `keep` does not name (the position parameters stay: they move). */
function onlyKept(url: string, keep: (name: string) => boolean): string {
  const hash = url.indexOf('#');
  const withoutHash = hash < 0 ? url : url.slice(0, hash);
  const q = withoutHash.indexOf('?');
  if (q < 0) return url;
  const parts = withoutHash
    .slice(q + 1)
    .split('&')
    .filter((part) => {
      if (part === '') return false;
      const eq = part.indexOf('=');
      const key = paramName(eq < 0 ? part : part.slice(0, eq));
      return key === 'cursor' || key === 'offset' || keep(key);
    });
  return `${withoutHash.slice(0, q)}${parts.length === 0 ? '' : `?${parts.join('&')}`}${hash < 0 ? '' : url.slice(hash)}`;
}

describe('pageLinks', () => {
  it('builds the same header as the array-and-join version it replaced', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('https://api.test/api/orders', 'http://localhost:3000/v1/items', 'https://api.test'),
        fc.option(fc.array(part, { maxLength: 8 }), { nil: undefined }),
        fc.option(fc.constantFrom('#frag', '#', '#a?b=c', '#x&cursor=1&offset=2'), { nil: '' }),
        fc.array(target, { minLength: 1, maxLength: 3 }),
        (base, query, fragment, targets) => {
          const url = `${base}${query === undefined ? '' : `?${query.join('&')}`}${fragment}`;
          expect(pageLinks(url, targets, KEEP_ALL)).toBe(previous(url, targets));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('builds the same header when every target moves one parameter (the links of one page: one pass over the query)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('https://api.test/api/orders', 'http://localhost:3000/v1/items', 'https://api.test'),
        fc.option(fc.array(part, { maxLength: 8 }), { nil: undefined }),
        fc.option(fc.constantFrom('#frag', '#', '#a?b=c', '#x&cursor=1&offset=2', '?#'), { nil: '' }),
        fc.constantFrom('cursor' as const, 'offset' as const),
        fc.array(target, { minLength: 1, maxLength: 3 }),
        (base, query, fragment, name, targets) => {
          const url = `${base}${query === undefined ? '' : `?${query.join('&')}`}${fragment}`;
          const same = targets.map((t) => ({ ...t, name }));
          expect(pageLinks(url, same, KEEP_ALL)).toBe(previous(url, same));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('keeps only the parameters `keep` names (and moves the position): the same links as for the URL without the others', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('https://api.test/api/orders', 'http://localhost:3000/v1/items', 'https://api.test/a%20b/c'),
        fc.array(part, { maxLength: 8 }),
        fc.subarray(['limit', 'status', 'sort', 'a', '', 'off set', '%zz']),
        fc.array(target, { minLength: 1, maxLength: 3 }),
        (base, query, names, targets) => {
          const keep = (name: string): boolean => names.includes(name);
          const url = `${base}?${query.join('&')}`;
          expect(pageLinks(url, targets, keep)).toBe(pageLinks(onlyKept(url, keep), targets, KEEP_ALL));
          const header = pageLinks(url, targets, keep) as string;
          for (const [, search] of header.matchAll(/<[^?>]*\?([^>]*)>/g)) {
            for (const piece of (search as string).split('&')) {
              const eq = piece.indexOf('=');
              const key = paramName(eq < 0 ? piece : piece.slice(0, eq));
              expect(key === 'cursor' || key === 'offset' || keep(key), `${key} in ${header}`).toBe(true);
            }
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
