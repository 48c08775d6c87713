/**
 * Properties of the query-string credential check and of `redactUrl` over arbitrary
 * input: both run on every request URL (the check in the guard, `redactUrl` in request
 * loggers), so neither may ever throw, whatever a client puts in the URL.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findQueryCredential, redactUrl } from './query-credentials.ts';
import { redactKey, safeLast4 } from '../redaction/redact-key.ts';

/** URL-ish text: full Unicode including lone surrogates, %-escapes and separators. */
const piece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('?', '&', ';', '=', '#', '%', '%F0%9F%98%80', '%ED%A0%80', '%zz', '+', 'api_key=', 'ACCESS_TOKEN=', 'api_key[]='),
);
const urlArb = fc.array(piece, { maxLength: 12 }).map((parts) => `/p?${parts.join('')}`);

describe('query credentials on arbitrary URLs', () => {
  it('findQueryCredential and redactUrl never throw', () => {
    fc.assert(
      fc.property(urlArb, (url) => {
        findQueryCredential(url, 'acme_live');
        expect(typeof redactUrl(url)).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });

  it('redactKey and safeLast4 never cut a surrogate pair in half', () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 16, maxLength: 40 }), (text) => {
        expect(redactKey(text)).not.toMatch(lone);
        expect(safeLast4(text) ?? '').not.toMatch(lone);
      }),
    );
  });
});

describe('findQueryCredential fast path', () => {
  // The full check without the fast path: every parameter decoded and looked at.
  const NAMES = new Set(['api_key', 'apikey', 'api-key', 'access_token']);
  function reference(url: string): 'named' | 'other' | undefined {
    const q = url.indexOf('?');
    if (q < 0) return undefined;
    const hash = url.indexOf('#', q);
    const query = hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
    for (const [name] of new URLSearchParams(query.replace(/[&;]/g, '&'))) {
      const lower = name.toLowerCase();
      const bracket = lower.indexOf('[');
      if (NAMES.has(bracket > 0 ? lower.slice(0, bracket) : lower)) return 'named';
    }
    return undefined;
  }
  const namePiece = fc.oneof(
    fc.constantFrom('api_key', 'APIKEY', 'Api-Key', 'access_token', 'api_key[]', 'api_key[0]', '[api_key]', 'apikeys', 'xapikey', 'api+key', 'cursor', 'limit', 'status', 'ACCESS_token', 'Apikey', 'bpikey'),
    fc.string({ unit: fc.constantFrom(...'aKpi_-ey[]+ '), maxLength: 8 }),
  );
  const valuePiece = fc.oneof(fc.constant(''), fc.constantFrom('=1', '=api_key', '=ACCESS_TOKEN', '=', '==x'), fc.string({ maxLength: 6 }).map((v) => `=${v}`));
  const queryArb = fc
    .array(fc.tuple(namePiece, valuePiece, fc.constantFrom('&', ';')), { maxLength: 6 })
    .map((parts) => `/p?${parts.map(([n, v, sep]) => `${n}${v}${sep}`).join('')}`);

  it('finds a credential-named parameter exactly when the full parse does (names only, any case, bracket suffix)', () => {
    fc.assert(
      fc.property(queryArb, (url) => {
        // No key of the prefix occurs in these URLs, so only names can be found.
        expect(findQueryCredential(url, 'acme_live')?.kind).toBe(reference(url) === 'named' ? 'named' : undefined);
      }),
      { numRuns: 2000 },
    );
  });
});
