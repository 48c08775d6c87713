import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findLink } from './link-header.ts';

const base = 'https://api.example.com/api/orders?limit=2';

describe('findLink', () => {
  it('finds rel="next" among several links', () => {
    const header = '<https://api.example.com/a?page=1>; rel="prev", <https://api.example.com/a?page=3>; rel="next"';
    expect(findLink(header, 'next', base)).toBe('https://api.example.com/a?page=3');
    expect(findLink(header, 'prev', base)).toBe('https://api.example.com/a?page=1');
  });

  it('accepts unquoted rel, several relation types and any case', () => {
    expect(findLink('</x>; rel=next', 'next', base)).toBe('https://api.example.com/x');
    expect(findLink('</x>; rel="last NEXT"', 'next', base)).toBe('https://api.example.com/x');
  });

  it('is not fooled by commas and semicolons inside quoted parameters', () => {
    const header = '</a>; title="one, two; three"; rel="prev", </b>; rel="next"';
    expect(findLink(header, 'next', base)).toBe('https://api.example.com/b');
  });

  it('uses the first rel parameter of a link and ignores later ones (RFC 8288 §3.3)', () => {
    expect(findLink('</a>; rel="prev"; rel="next"', 'next', base)).toBeUndefined();
    expect(findLink('</a>; rel="prev"; rel="next"', 'prev', base)).toBe('https://api.example.com/a');
  });

  it('resolves relative targets against the request URL', () => {
    expect(findLink('<?cursor=abc&limit=2>; rel="next"', 'next', base)).toBe('https://api.example.com/api/orders?cursor=abc&limit=2');
  });

  it('returns undefined when there is no such relation or no header', () => {
    expect(findLink('</a>; rel="prev"', 'next', base)).toBeUndefined();
    expect(findLink(null, 'next', base)).toBeUndefined();
    expect(findLink('garbage', 'next', base)).toBeUndefined();
  });

  it('round-trips any generated link list', () => {
    const rel = fc.constantFrom('next', 'prev', 'first', 'last');
    const link = fc.record({ path: fc.webPath(), rel, title: fc.string({ unit: fc.constantFrom('a', ',', ';', ' ', '=') }) });
    fc.assert(
      fc.property(fc.array(link, { maxLength: 5 }), (links) => {
        const header = links
          .map((l) => `<https://h.test${l.path.replace(/[<>]/g, '')}>; title="${l.title}"; rel="${l.rel}"`)
          .join(', ');
        const first = links.find((l) => l.rel === 'next');
        const found = findLink(header, 'next', base);
        if (!first) expect(found).toBeUndefined();
        else expect(found).toBe(new URL(`https://h.test${first.path.replace(/[<>]/g, '')}`).href);
      }),
    );
  });
});
