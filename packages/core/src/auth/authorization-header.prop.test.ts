import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readApiKeyHeader, type ApiKeyHeader } from './authorization-header.ts';

/** The reading as first written, with regular expressions: the reference. */
function reference(value: string | null | undefined): ApiKeyHeader {
  if (typeof value !== 'string') return { kind: 'missing' };
  const header = value.replace(/^[ \t]+/, '');
  const scheme = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/.exec(header)?.[0];
  if (scheme === undefined || scheme.length !== 6 || scheme.toLowerCase() !== 'apikey') return { kind: 'missing' };
  let i = 6;
  while (header.charCodeAt(i) === 32) i++;
  if (i === 6) return { kind: 'key', text: header.slice(6) };
  let end = header.length;
  while (end > i && (header.charCodeAt(end - 1) === 32 || header.charCodeAt(end - 1) === 9)) end--;
  return { kind: 'key', text: header.slice(i, end) };
}

// Pieces that matter: the scheme in odd cases and spellings, near-letters, OWS, separators.
const piece = fc.constantFrom('ApiKey', 'apikey', 'APIKEY', 'ApiKeys', 'Api', 'Key', 'Bearer', ' ', '\t', ',', ':', '=', '-', '!', '~', 'k', '@', '`', '[', '\u212a', 'İ', 'ı', '\u00ff', 'acme_live_0123456789abcdefghijABCDEFGHIJkl000000');

describe('readApiKeyHeader, properties', () => {
  it('reads every value as the regular-expression reference does', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(piece, { maxLength: 8 }).map((p) => p.join('')), fc.string(), fc.string({ unit: 'binary' })), (value) => {
        expect(readApiKeyHeader(value)).toEqual(reference(value));
      }),
      { numRuns: 2000 },
    );
  });
});
