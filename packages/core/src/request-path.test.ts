import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toProblem } from './errors.ts';
import { requestPathError } from './request-path.ts';

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

  it('agrees with decodeURIComponent on every path without dot segments', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', '%', '2', 'F', 'E0', 'A4', 'zz', '/', '%C3%A9', '~'), { maxLength: 12 }), (parts) => {
        const path = `/${parts.join('')}`;
        let decodes = true;
        try {
          decodeURIComponent(path);
        } catch {
          decodes = false;
        }
        expect(requestPathError(path) === undefined).toBe(decodes);
      }),
    );
  });
});
