import { describe, expect, it } from 'vitest';
import { generateKey } from '../keys/key-format.ts';
import { findQueryCredential, redactUrl } from './query-credentials.ts';

const PREFIX = 'acme_live';
const key = generateKey(PREFIX);
const other = generateKey('other_env');

describe('findQueryCredential', () => {
  it('finds credential-named parameters in any case, whatever their value', () => {
    for (const name of ['api_key', 'apikey', 'api-key', 'access_token', 'API_KEY', 'ApiKey', 'Access_Token']) {
      expect(findQueryCredential(`/api/orders?limit=5&${name}=whatever`, PREFIX)).toEqual({ kind: 'named', name: name.toLowerCase() });
    }
    expect(findQueryCredential('https://h.test/a?api_key=', PREFIX)).toEqual({ kind: 'named', name: 'api_key' });
  });

  it('does not treat `key` or other ordinary names as credentials', () => {
    expect(findQueryCredential('/api/orders?key=created_at&token=abc&limit=5', PREFIX)).toBeUndefined();
    expect(findQueryCredential('/api/orders', PREFIX)).toBeUndefined();
    expect(findQueryCredential('/api/orders?', PREFIX)).toBeUndefined();
  });

  it('finds a valid key of the prefix under any name, encoded or not, or as a bare name', () => {
    expect(findQueryCredential(`/api/orders?key=${key}`, PREFIX)).toEqual({ kind: 'key' });
    expect(findQueryCredential(`/api/orders?x=${encodeURIComponent(key).replace(/_/g, '%5F')}`, PREFIX)).toEqual({ kind: 'key' });
    expect(findQueryCredential(`/api/orders?${key}`, PREFIX)).toEqual({ kind: 'key' });
    expect(findQueryCredential(`/api/orders?next=${encodeURIComponent(`/x?k=${key}&y=1`)}`, PREFIX)).toEqual({ kind: 'key' });
  });

  it('ignores key-shaped values that fail the checksum, other prefixes, and the fragment', () => {
    const typo = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    expect(findQueryCredential(`/api/orders?q=${typo}`, PREFIX)).toBeUndefined();
    expect(findQueryCredential(`/api/orders?q=${other}`, PREFIX)).toBeUndefined();
    expect(findQueryCredential(`/api/orders#${key}`, PREFIX)).toBeUndefined();
  });
});

describe('redactUrl', () => {
  it('redacts credential-named values to their last 4 characters', () => {
    expect(redactUrl('/api/orders?api_key=hunter2hunter2hunter2&limit=5')).toBe('/api/orders?api_key=…ter2&limit=5');
    expect(redactUrl('/api/orders?ACCESS_TOKEN=short')).toBe('/api/orders?ACCESS_TOKEN=…');
    expect(redactUrl('/a?apikey=aaaaaaaaaaaaaaa%26%3D%26')).toBe('/a?apikey=…a%26%3D%26');
  });

  it('redacts key-shaped text of any prefix anywhere, leaving the rest byte for byte', () => {
    const url = `https://api.test/v1/${other}/x?limit=5&q=a%20b&token=${key}#frag`;
    expect(redactUrl(url)).toBe(`https://api.test/v1/…${other.slice(-4)}/x?limit=5&q=a%20b&token=…${key.slice(-4)}#frag`);
    expect(redactUrl(new URL(`https://api.test/?${key}`))).toBe(`https://api.test/?…${key.slice(-4)}`);
  });

  it('leaves URLs without credentials unchanged', () => {
    for (const url of ['/api/orders?limit=5&cursor=abc', '/', 'https://x.test/a/b?c=%zz&d', '/a#b?c=d', '/a?key=created_at']) {
      expect(redactUrl(url)).toBe(url);
    }
  });
});

describe('query credentials: separators, brackets and non-ASCII', () => {
  it('treats `;` as a separator as well (RFC 1866 §8.2.1; many servers and proxies split on it)', () => {
    expect(findQueryCredential('/api/orders?limit=5;api_key=hunter2', PREFIX)).toEqual({ kind: 'named', name: 'api_key' });
    expect(findQueryCredential('/api/orders?limit=5;Access_Token=x&y=1', PREFIX)).toEqual({ kind: 'named', name: 'access_token' });
    expect(redactUrl('/api/orders?limit=5;api_key=hunter2hunter2hunter2&y=1')).toBe('/api/orders?limit=5;api_key=…ter2&y=1');
  });

  it('sees credential names with a bracket suffix (`api_key[]`, `api_key[0]`: qs, PHP, Rails)', () => {
    expect(findQueryCredential('/api/orders?api_key[]=x', PREFIX)).toEqual({ kind: 'named', name: 'api_key' });
    expect(findQueryCredential('/api/orders?API_KEY%5B0%5D=x', PREFIX)).toEqual({ kind: 'named', name: 'api_key' });
    expect(redactUrl('/a?api_key[]=hunter2hunter2hunter2')).toBe('/a?api_key[]=…ter2');
    expect(findQueryCredential('/api/orders?api_keys=x&my_api_key=y&apikey_hint=z', PREFIX)).toBeUndefined();
  });

  it('redactUrl does not throw on a credential value ending in a character outside the BMP', () => {
    // The last 4 UTF-16 units of '…😀abc' begin with half of the emoji: encodeURIComponent threw URIError.
    expect(redactUrl('/a?api_key=aaaaaaaaaaaaaaaaaaaa%F0%9F%98%80abc')).toBe('/a?api_key=…abc');
    expect(redactUrl('/a?api_key=aaaaaaaaaaaaaaaaaaaa%F0%9F%98%80ab')).toBe('/a?api_key=…%F0%9F%98%80ab');
  });
});
