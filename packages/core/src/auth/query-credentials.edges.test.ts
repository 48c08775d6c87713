/**
 * `redactUrl` at the edges of a URL's shape and of a credential's value: a URL that is
 * only a query or only a fragment, a parameter with no name or no value, a `+` in a
 * credential read as a space, exactly 15 characters showing nothing, and a lone surrogate
 * shown as U+FFFD instead of making the encoding throw.
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../keys/key-format.ts';
import { findQueryCredential, redactUrl } from './query-credentials.ts';

describe('redactUrl edges', () => {
  it('keeps a URL that is only a query, only a fragment, or a path and a fragment as sent', () => {
    expect(redactUrl('?status=paid')).toBe('?status=paid');
    expect(redactUrl('#top')).toBe('#top');
    expect(redactUrl('/orders#top')).toBe('/orders#top');
    expect(redactUrl('/orders?status=paid#top')).toBe('/orders?status=paid#top');
    expect(redactUrl('/orders?')).toBe('/orders?');
  });

  it('reads a ? after the # as part of the fragment', () => {
    expect(redactUrl('/a#b?c=d')).toBe('/a#b?c=d');
  });

  it('redacts a key in a value on its own, keeping the name as sent', () => {
    expect(redactUrl('/x?a%20b=acme_live_0123456789abcdefghijABCDEFGHIJ1a2B3c')).toBe('/x?a%20b=…2B3c');
  });

  it('redacts a credential in a URL that is only a query', () => {
    expect(redactUrl('?api_key=abcdefghijklmnopqrst')).toBe('?api_key=…qrst');
  });

  it('keeps a parameter with no name, and a credential name with no value, as sent', () => {
    expect(redactUrl('/x?=abc')).toBe('/x?=abc');
    expect(redactUrl('/x?api_key')).toBe('/x?api_key');
    expect(redactUrl('/x?api_key&status=paid')).toBe('/x?api_key&status=paid');
  });

  it('shows only … for a credential of 15 characters, and the last 4 of 16', () => {
    expect(redactUrl('/x?api_key=abcdefghijklmno')).toBe('/x?api_key=…');
    expect(redactUrl('/x?api_key=abcdefghijklmnop')).toBe('/x?api_key=…mnop');
  });

  it('reads + in a credential as a space, as a form decoder does', () => {
    expect(redactUrl('/x?api_key=abcdefghijkl+mno')).toBe('/x?api_key=…%20mno');
  });

  it('shows a lone surrogate at the end of a credential as U+FFFD', () => {
    expect(redactUrl(`/x?api_key=${'x'.repeat(13)}abc\uD800`)).toBe('/x?api_key=…abc%EF%BF%BD');
  });
});

describe('findQueryCredential edges', () => {
  it('finds a key of any one of several prefixes', () => {
    const live = generateKey('acme_live');
    const test = generateKey('acme_test');
    expect(findQueryCredential(`/x?k=${live}`, ['acme_live', 'acme_test'])).toEqual({ kind: 'key' });
    expect(findQueryCredential(`/x?k=${test}`, ['acme_live', 'acme_test'])).toEqual({ kind: 'key' });
    expect(findQueryCredential(`/x?k=${test}`, ['acme_live'])).toBeUndefined();
  });

  it('decodes a credential name encoded from its first character', () => {
    expect(findQueryCredential('/x?%61pi_key=abc', 'acme_live')).toEqual({ kind: 'named', name: 'api_key' });
  });
});
