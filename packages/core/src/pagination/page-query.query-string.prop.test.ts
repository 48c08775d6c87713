import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQueryString, queryStringOf } from './page-query.ts';

const entries = (query: URLSearchParams): [string, string][] => [...query];

describe('parseQueryString()', () => {
  it('gives the names and values of new URLSearchParams(), in order', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '0', '=', '&', '?', '%', '2', 'F', '+', ' ', '#', 'é', '\ud800', '~', '.'), maxLength: 40 });
    fc.assert(
      fc.property(text, (raw) => {
        expect(entries(parseQueryString(raw))).toEqual(entries(new URLSearchParams(raw)));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the queries a paginated route sees', () => {
    for (const raw of ['', '?', '&', 'limit=20', '?limit=20&cursor=abc.def_-', 'limit=20&limit=30', 'a==b&&c', 'status=paid&limit=20&cursor=x', 'q=a+b', 'q=%41%zz']) {
      expect(entries(parseQueryString(raw))).toEqual(entries(new URLSearchParams(raw)));
    }
  });
});

describe('queryStringOf()', () => {
  it('gives the text between the first `?` and the `#` after it, for absolute URLs and paths', () => {
    const path = fc.string({ unit: fc.constantFrom('a', '/', '.', '=', '&', '%', 'é'), maxLength: 20 });
    const query = fc.string({ unit: fc.constantFrom('a', '/', '?', '=', '&', '%', '2', '+', 'é'), maxLength: 20 });
    const hash = fc.string({ unit: fc.constantFrom('a', '?', '#', '=', '&'), maxLength: 10 });
    fc.assert(
      fc.property(fc.constantFrom('https://h.example/', '/'), path, query, hash, (origin, p, q, h) => {
        expect(queryStringOf(`${origin}${p}?${q}#${h}`)).toBe(q);
        expect(queryStringOf(`${origin}${p}?${q}`)).toBe(q);
        expect(queryStringOf(`${origin}${p}`)).toBe('');
      }),
      { numRuns: 2000 },
    );
  });
});
