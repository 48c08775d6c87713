import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mangledKey } from '@keyset/test-support';
import { contentTypeError, hostError, requestError } from './request-error.ts';

const ok = { target: '/items', host: 'api.example.com', contentType: null };

describe('hostError', () => {
  it('accepts host names, IPv4 and bracketed IPv6 addresses with an optional port', () => {
    for (const host of ['localhost', 'api.example.com', 'API.Example.COM', 'example.com.', '127.0.0.1:3000', '[::1]:8080', '[2001:db8::1]', 'my_service:80', 'a', 'x:65535']) {
      expect(hostError(host), host).toBeUndefined();
    }
  });

  it('refuses none, an empty one, and anything that is no host with 400 naming `host`', () => {
    for (const host of [undefined, null, '', 'a/b', 'a b', 'user@host', 'x:99999', 'x:', ':80', 'a..b', '-', 'a%2fb', 'h?x', '[::1', 'é.com', 'x'.repeat(300)]) {
      expect(hostError(host), String(host)).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'host' } });
    }
  });

  it('applies the Link origin rule (isValidHost): key-shaped hosts, whole or mangled, are refused and never quoted', () => {
    fc.assert(
      fc.property(mangledKey, fc.constantFrom('', '.example.com', ':3000'), ({ sent }, tail) => {
        const error = hostError(`${sent}${tail}`);
        expect(error, sent).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'host' } });
        expect(JSON.stringify({ ...error, message: error?.message })).not.toContain(sent);
      }),
    );
    // Labels over 63 characters are no DNS name either.
    expect(hostError(`${'a'.repeat(64)}.com`)?.extensions.field).toBe('host');
  });
});

describe('contentTypeError', () => {
  it('accepts media types with parameters, and no Content-Type at all', () => {
    for (const type of [undefined, null, 'application/json', 'application/json; charset=utf-8', 'text/plain;charset="a;b"', 'multipart/form-data; boundary=x', 'a/b;', 'application/merge-patch+json']) {
      expect(contentTypeError(type), String(type)).toBeUndefined();
    }
  });

  it('refuses an empty, blank or malformed one with 400 naming `content-type`', () => {
    for (const type of ['', '  ', 'json', 'application/', '/json', 'a/b c', 'a/b; c', 'a/b; c="x']) {
      expect(contentTypeError(type), type).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'content-type' } });
    }
  });

  it('answers long hostile values at once (no backtracking blow-up)', () => {
    for (const type of [`a/b${' ;'.repeat(20_000)}x`, `a/b;${' '.repeat(50_000)}=`, `a/b; c="${'\\\\'.repeat(30_000)}`]) {
      expect(contentTypeError(type)).toBeDefined();
    }
  });
});

describe('requestError', () => {
  it('checks the target, then the Host, then the Content-Type', () => {
    expect(requestError(ok)).toBeUndefined();
    expect(requestError({ target: '*', host: 'a/b', contentType: '' })?.extensions.field).toBe('path');
    expect(requestError({ ...ok, host: 'a/b', contentType: '' })?.extensions.field).toBe('host');
    expect(requestError({ ...ok, contentType: '' })?.extensions.field).toBe('content-type');
  });

  it("takes an absolute-form target's authority for the Host (RFC 9112 §3.2.2)", () => {
    expect(requestError({ ...ok, target: 'http://api.example.com/items', host: 'a/b' })).toBeUndefined();
    expect(requestError({ ...ok, target: 'http://a b/items' })?.extensions.field).toBe('host');
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string()), fc.option(fc.string()), (target, host, contentType) => {
        const error = requestError({ target, host, contentType });
        if (error !== undefined) expect(error.status).toBe(400);
      }),
    );
  });
});
