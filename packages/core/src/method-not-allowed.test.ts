import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, KeysetError, toProblem, type ErrorCode } from './errors.ts';
import { methodNotAllowed, routeMethods } from './method-not-allowed.ts';

describe('methodNotAllowed', () => {
  it('is a 405 problem with Allow (GET implies HEAD) and the list as a member', () => {
    const error = methodNotAllowed('POST', ['get']);
    expect(error).toBeDefined();
    const { status, headers, body } = toProblem(error, { instance: '/api/orders' });
    expect(status).toBe(405);
    expect(headers).toMatchObject({ allow: 'GET, HEAD', 'content-type': 'application/problem+json' });
    expect(body).toMatchObject({ code: 'method_not_allowed', title: 'Method not allowed', allowed_methods: ['GET', 'HEAD'] });
    expect(body.detail).toBe('This path supports only GET, HEAD.');
  });

  it('orders common methods first, then others by name, without duplicates or ALL', () => {
    expect(methodNotAllowed('GET', ['delete', 'PROPFIND', 'post', 'POST', 'ALL', 'options', 'MKCOL'])?.headers.allow).toBe(
      'POST, DELETE, OPTIONS, MKCOL, PROPFIND',
    );
  });

  it('is undefined for an unknown path (404) and for a method the path allows', () => {
    expect(methodNotAllowed('GET', [])).toBeUndefined();
    expect(methodNotAllowed('GET', ['ALL'])).toBeUndefined();
    expect(methodNotAllowed('head', ['GET'])).toBeUndefined();
    expect(methodNotAllowed('DELETE', ['DELETE', 'GET'])).toBeUndefined();
  });

  it('never echoes the request method (a client could send anything there, a key too)', () => {
    const keyLike = fc.stringMatching(/^ks_live_[0-9A-Za-z]{38}$/);
    fc.assert(
      fc.property(keyLike, fc.subarray(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'X-CUSTOM']), (method, allowed) => {
        const error = methodNotAllowed(method, allowed);
        if (allowed.length === 0) {
          expect(error).toBeUndefined();
          return;
        }
        const { body, headers } = toProblem(error);
        expect(JSON.stringify({ body, headers })).not.toContain(method);
        expect(headers.allow).toMatch(/^[A-Z-]+(, [A-Z-]+)*$/);
      }),
      { numRuns: 200 },
    );
  });
});

describe('ERROR_CATALOGUE', () => {
  it('lists every code with the status and title its problems carry', () => {
    const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
    expect(codes.length).toBeGreaterThan(10);
    for (const code of codes) {
      const { status, body } = toProblem(new KeysetError(code));
      expect({ status, title: body.title }).toEqual(ERROR_CATALOGUE[code]);
    }
    expect(ERROR_CATALOGUE.method_not_allowed).toEqual({ status: 405, title: 'Method not allowed' });
    expect(Object.isFrozen(ERROR_CATALOGUE)).toBe(true);
  });
});

describe('routeMethods', () => {
  const routes = [
    { method: 'GET', path: '/things/:id' },
    { method: 'DELETE', path: '/things/:id{[0-9]+}' },
    { method: 'POST', path: '/v1/jobs' },
    { method: 'GET', path: '/files/*' },
    { method: 'PUT', path: '/things' },
  ];

  it('lists the methods of the routes whose pattern matches the path', () => {
    expect(routeMethods(routes, '/things/7')).toEqual(['GET', 'DELETE']);
    expect(routeMethods(routes, '/v1/jobs')).toEqual(['POST']);
    expect(routeMethods(routes, '/files/a/b')).toEqual(['GET']);
    expect(routeMethods(routes, '/things')).toEqual(['PUT']);
  });

  it('matches nothing for other paths: an empty parameter, a missing or extra segment, another case', () => {
    for (const path of ['/things/', '/things/7/x', '/v1', '/v1/jobs/', '/V1/jobs', '/nope', '/']) expect(routeMethods(routes, path), path).toEqual([]);
  });

  it('a parameter matches any one non-empty segment (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[^/]+$/), (segment) => {
        expect(routeMethods([{ method: 'GET', path: '/a/:x/b' }], `/a/${segment}/b`)).toEqual(['GET']);
      }),
    );
  });
});
