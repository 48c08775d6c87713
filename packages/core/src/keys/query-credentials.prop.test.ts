/**
 * Properties of the query-string credential check and of `redactUrl` over arbitrary
 * input: both run on every request URL (the check in the guard, `redactUrl` in request
 * loggers), so neither may ever throw, whatever a client puts in the URL.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findQueryCredential, redactUrl } from './query-credentials.ts';
import { redactKey, safeLast4 } from './redact-key.ts';

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
