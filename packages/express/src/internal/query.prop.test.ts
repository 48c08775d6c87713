import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery } from './query.ts';

const entries = (query: URLSearchParams): [string, string][] => [...query];

describe('parseQuery()', () => {
  it('gives the names and values of new URLSearchParams(), in order', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '0', '=', '&', '?', '%', '2', 'F', '+', ' ', '#', 'é', '\ud800', '~', '.'), maxLength: 40 });
    fc.assert(
      fc.property(text, (raw) => {
        expect(entries(parseQuery(raw))).toEqual(entries(new URLSearchParams(raw)));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the queries a paginated route sees', () => {
    for (const raw of ['', '?', '&', 'limit=20', '?limit=20&cursor=abc.def_-', 'limit=20&limit=30', 'a==b&&c', 'status=paid&limit=20&cursor=x', 'q=a+b', 'q=%41%zz']) {
      expect(entries(parseQuery(raw))).toEqual(entries(new URLSearchParams(raw)));
    }
  });
});
