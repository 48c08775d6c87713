/**
 * A `Link` header sends the request URL back, so what must not be
 * echoed is refused before it is: a `Host` that is no host name (a key sent as `Host`
 * came back in `Link`), and key-shaped text, whole or mangled, in the path or in a
 * parameter the links keep. Ordinary URLs (long cursors included) still get their links.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mangledKey, secretLeak } from '@keyset/test-support';
import { KeysetError, toProblem } from '../errors.ts';
import { pageLinks, type PageLinkTarget } from './page-links.ts';

const NEXT: PageLinkTarget[] = [{ rel: 'next', name: 'cursor', value: 'AnsiZCI6ImYiLCJwIjpbIjIwMjYtMTEtMjZUMTM6NTA6NDIuMDAwMDAwWiIsIjMyIl0sInQiOjE3OTU3MDEwNDR90DG7dxMyv_b8Zpis' }];

/** The links of an endpoint that reads `limit` and `status` and keeps `fields`. */
const KEEP = (name: string): boolean => name === 'limit' || name === 'status' || name === 'fields';

function refusal(url: string, targets: readonly PageLinkTarget[] = NEXT, keep: (name: string) => boolean = KEEP): KeysetError {
  try {
    pageLinks(url, targets, keep);
  } catch (error) {
    if (error instanceof KeysetError) return error;
    throw error;
  }
  throw new Error(`expected a refusal for ${url}`);
}

describe('pageLinks refuses to echo what it must not', () => {
  it('a mangled key as the host, in the path, or in a kept parameter value', () => {
    fc.assert(
      fc.property(mangledKey, fc.constantFrom('host', 'path', 'name', 'value'), fc.constantFrom<readonly PageLinkTarget[]>(NEXT, [{ rel: 'next', name: 'offset', value: '20' }, { rel: 'first', name: 'cursor', value: null }]), ({ key, sent }, where, targets) => {
        const url =
          where === 'host' ? `http://${sent}/api/orders?limit=2` :
          where === 'path' ? `http://127.0.0.1:3000/api/customers/${sent}/orders?limit=2` :
          where === 'name' ? `http://127.0.0.1:3000/api/orders?limit=2&${sent}=1` :
          `http://127.0.0.1:3000/api/orders?status=${sent}&limit=2`;
        // A parameter the endpoint does not keep is dropped, whatever it holds; kept, it is refused.
        const error = refusal(url, targets, where === 'name' ? () => true : KEEP);
        // Mangled keys with `%` fail isValidHost as well: any refusal is a 400, none echoes.
        const { status, body } = toProblem(error, { instance: '/api/orders' });
        expect(status).toBe(400);
        expect(body.code).toBe(where === 'name' || where === 'value' ? 'api_key_in_query' : 'invalid_request');
        expect(secretLeak(JSON.stringify(body), [key])).toBeUndefined();
      }),
    );
  });

  it('a host with userinfo or key-shaped text is refused with field host (its syntax is isValidHost\'s, before routing)', () => {
    for (const host of ['user@api.example.com', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AB', 'ks-live-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AB.example.com:3000']) {
      expect(refusal(`http://${host}/api/orders?limit=2`).extensions).toEqual({ field: 'host' });
    }
  });

  it('ordinary URLs keep their links: filters, ids, a cursor being replaced, hex digests', () => {
    const urls = [
      'https://api.example.com/api/orders?limit=2&status=paid',
      'http://[::1]:3000/api/orders?cursor=AnsiZCI6ImYiLCJwIjpbIjIwMjYtMTEtMjZUMTM6NTA6NDIuMDAwMDAwWiIsIjMyIl0sInQiOjE3OTU3MDEwNDR90DG7dxMyv&limit=2',
      'http://localhost:3000/api/keys/key_7Hq2mXbP0aLr9sVtY3eWcN/events?since=da39a3ee5e6b4b0d3255bfef95601890afd80709',
      'http://orders_api:3000/api/orders?customer=cust_0278&from=2025-01-31T00:00:00Z',
    ];
    for (const url of urls) expect(pageLinks(url, NEXT, () => true), url).toContain('rel="next"');
  });

  it('an unknown parameter never comes back, whatever it holds: a key cut to any length, split by dots, as its name or value', () => {
    fc.assert(
      fc.property(mangledKey, fc.integer({ min: 8, max: 46 }), fc.constantFrom('', '.', '-', '~'), fc.constantFrom('name', 'value'), fc.constantFrom<readonly PageLinkTarget[]>(NEXT, [{ rel: 'next', name: 'offset', value: '20' }, { rel: 'first', name: 'cursor', value: null }]), ({ key }, length, separator, where, targets) => {
        const cut = key.slice(key.length - length);
        const sent = separator === '' ? cut : cut.replace(/(.{5})/g, `$1${separator}`);
        const url = where === 'name' ? `http://127.0.0.1:3000/api/orders?limit=2&${sent}=1&fields=id` : `http://127.0.0.1:3000/api/orders?limit=2&q=${sent}&fields=id`;
        const header = pageLinks(url, targets, KEEP) as string;
        expect(secretLeak(header, [key]), header).toBeUndefined();
        expect(header).toContain('limit=2');
        expect(header).toContain('fields=id');
      }),
    );
  });
});
