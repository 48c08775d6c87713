import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from './errors.ts';
import { requestInstance, requestPathError } from './request-error.ts';

describe('requestPathError', () => {
  it('refuses a malformed or non-UTF-8 percent-encoding with 400 invalid_request naming the path', () => {
    for (const path of ['/api/orders%ZZ', '/api/keys/%E0%A4%A', '/api/keys/%E0%A4', '/a%', '/a%2', '/%C0%AF', '/%FF/x']) {
      const { status, body } = toProblem(requestPathError(path), { instance: path });
      expect(status, path).toBe(400);
      expect(body, path).toMatchObject({ code: 'invalid_request', field: 'path', detail: 'The request path is not valid percent-encoded UTF-8.' });
    }
  });

  it('refuses dot segments, also percent-encoded, anywhere in the path', () => {
    for (const path of ['/api/keys/../orders', '/api/./orders', '/./healthz', '/api/keys/..', '/a/.', '/api/%2e%2e/orders', '/a/.%2E/b', '/a/%2E/b']) {
      expect(requestPathError(path), path).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'path' } });
      expect(requestPathError(path)?.detail, path).toContain('`..`');
    }
  });

  it('accepts well-formed paths, dots inside segments, and ignores the query and fragment', () => {
    for (const path of ['/', '/api/orders', '/api/keys/a%2Fb', '/%E2%9C%93', '/a/.well-known/x', '/a/...', '/v1.2/x', '/a..b', '/x?limit=%zz', '/x?a=/../b', '/x#%zz']) {
      expect(requestPathError(path), path).toBeUndefined();
    }
  });

  it('agrees with decodeURIComponent on every path without dot segments, refusing encoded unreserved characters', () => {
    // `%2E` (`.`), `%41` (`A`): one server decodes them before routing and another does not,
    // so they are refused even where decodeURIComponent succeeds (`/%2E0` is `/.0`).
    const encodesUnreserved = (path: string): boolean =>
      [...path.matchAll(/%([0-9A-Fa-f]{2})/g)].some((m) => /[A-Za-z0-9._~-]/.test(String.fromCharCode(Number.parseInt(m[1]!, 16))));
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', '%', '2', 'F', 'E0', 'A4', 'zz', '/', '%C3%A9', '~'), { maxLength: 12 }), (parts) => {
        const path = `/${parts.join('')}`;
        let decodes = true;
        try {
          decodeURIComponent(path);
        } catch {
          decodes = false;
        }
        expect(requestPathError(path) === undefined).toBe(decodes && !encodesUnreserved(path));
      }),
      { examples: [[['%', '2', 'E0']], [['%', '2', 'F']]] },
    );
  });

  it('refuses targets that are no path, and characters a URI path cannot hold', () => {
    for (const target of ['*', 'x', '\\api/orders', '/api\\orders', '/a"b', '/a b', '/a<b>', '/a{b}', '/a|b', '/a^b', '/a`b', '/caf\u00e9']) {
      expect(requestPathError(target), target).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'path' } });
    }
    // The query is not the path: a backslash there is the parameter's business.
    expect(requestPathError('/healthz?x=\\')).toBeUndefined();
  });

  it('refuses percent-encoded unreserved characters, which some routers decode and others not', () => {
    for (const path of ['/%61pi/keys', '/api/keys/key_%31', '/healthz%7E', '/a%2Db', '/a%5Fb', '/A%5A', '/a%2eb']) {
      expect(requestPathError(path)?.detail, path).toContain('never need it');
    }
    // Reserved and non-ASCII escapes stay: they are how such characters are sent.
    for (const path of ['/api/keys/a%2Fb', '/a%20b', '/a%25b', '/%E2%9C%93', '/a%3Fb', '/a%40b', '/a%5Bb']) {
      expect(requestPathError(path), path).toBeUndefined();
    }
  });

  it('reads absolute-form targets by their path (RFC 9112 §3.2.2)', () => {
    expect(requestPathError('http://example.com/api/orders?x=1')).toBeUndefined();
    expect(requestPathError('http://example.com')).toBeUndefined();
    expect(requestPathError('http://example.com/%61pi')).toMatchObject({ status: 400 });
    expect(requestPathError('ftp://example.com/a')).toMatchObject({ status: 400 });
  });

  it('never refuses a path that encodeURIComponent built from any segments', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', minLength: 1 }), { maxLength: 6 }), (segments) => {
        const path = `/${segments.map((s) => encodeURIComponent(s)).filter((s) => s !== '.' && s !== '..').join('/')}`;
        expect(requestPathError(path)).toBeUndefined();
      }),
    );
  });
});

describe('requestInstance', () => {
  it('is the path as sent, without the query, characters a URI cannot hold encoded', () => {
    expect(requestInstance('/items?limit=0&note=secret')).toBe('/items');
    expect(requestInstance('/nope/%E0%A4%A')).toBe('/nope/%E0%A4%A');
    expect(requestInstance('/api\\orders')).toBe('/api%5Corders');
    expect(requestInstance('http://h/a?b')).toBe('/a');
    expect(requestInstance('*')).toBe('*');
    expect(requestInstance('/a\ud800b')).toBe('/a%EF%BF%BDb');
  });
});
