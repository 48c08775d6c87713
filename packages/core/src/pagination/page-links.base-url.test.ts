import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mangledKey } from '@keyset/test-support';
import { ConfigError, KeysetError, toProblem } from '../errors.ts';
import { isValidHost, normalizeBaseUrl, requestOrigin } from './page-links.ts';

describe('normalizeBaseUrl', () => {
  it('keeps scheme, host and path prefix, without a trailing slash', () => {
    expect(normalizeBaseUrl('https://api.example.com')).toBe('https://api.example.com');
    expect(normalizeBaseUrl('https://example.com/v1/')).toBe('https://example.com/v1');
    expect(normalizeBaseUrl(new URL('http://127.0.0.1:8080//'))).toBe('http://127.0.0.1:8080');
    expect(normalizeBaseUrl(undefined)).toBeUndefined();
  });

  it('refuses what cannot prefix a request path', () => {
    for (const bad of ['api.example.com', '/v1', 'ftp://example.com', 'https://example.com/?a=1', 'https://example.com/#x', 'https://user:pw@example.com', 'https://ks-live-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AB.example.com']) {
      expect(() => normalizeBaseUrl(bad), bad).toThrow(ConfigError);
    }
  });
});

describe('isValidHost and requestOrigin', () => {
  it('accepts DNS names, IPv4, bracketed IPv6, with or without a port', () => {
    for (const host of ['localhost', 'api.example.com', 'API.Example.COM.', 'orders_api:3000', '127.0.0.1:8080', '[::1]', '[2001:db8::1]:443', 'a', `${'a'.repeat(63)}.com`, 'xn--bcher-kva.example']) {
      expect(isValidHost(host), host).toBe(true);
    }
  });

  it('refuses what is no host name: empty, spaces, userinfo, paths, bad ports and labels, encodings', () => {
    for (const host of ['', ' ', 'a b', 'user@host', 'evil.example@api.example.com', 'host/path', 'host?x', 'host#x', 'h:', 'h:99999', 'h:-1', 'h:8080:1', '-a.com', 'a-.com', 'a..b', '.a', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}a`, '[::1', '[zz]', '[::1]x', 'a%2Eb', 'é.example', 'host\\x', "h'", 'h"']) {
      expect(isValidHost(host), host).toBe(false);
    }
  });

  it('refuses key-shaped hosts, whole or mangled (a bare secret is a valid DNS label)', () => {
    fc.assert(
      fc.property(mangledKey, fc.constantFrom('', '.example.com', ':3000'), ({ sent }, tail) => {
        expect(isValidHost(`${sent}${tail}`), sent).toBe(false);
      }),
    );
  });

  it('requestOrigin builds the origin or throws 400 invalid_request naming host, never quoting it', () => {
    expect(requestOrigin('https', 'api.example.com')).toBe('https://api.example.com');
    expect(requestOrigin('http:', '[::1]:3000')).toBe('http://[::1]:3000');
    for (const [protocol, host] of [['https', 'ks_live_0123456789abcdefghijABCDEFGHIJKLMN1a2B'], ['ftp', 'example.com'], ['http', undefined], ['http', 'bad host!']] as const) {
      let caught: unknown;
      try {
        requestOrigin(protocol, host);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(KeysetError);
      const { status, body } = toProblem(caught, { instance: '/api/orders' });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'invalid_request', field: 'host', instance: '/api/orders' });
      if (host !== undefined) expect(JSON.stringify(body)).not.toContain(host);
    }
  });
});
