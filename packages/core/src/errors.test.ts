import { describe, expect, it } from 'vitest';
import { AuthenticationError, KeysetError, isKeysetError, toProblem } from './errors.ts';

describe('toProblem', () => {
  it('maps a keyset error to an RFC 9457 problem with its code, status and extensions', () => {
    const err = new KeysetError('limit_too_large', { detail: 'limit 500 exceeds 100', extensions: { max_limit: 100 } });
    const { status, headers, body } = toProblem(err, { instance: '/api/orders' });
    expect(status).toBe(400);
    expect(headers['content-type']).toBe('application/problem+json');
    expect(body).toEqual({
      type: 'urn:keyset:problem:limit_too_large',
      title: 'Limit too large',
      status: 400,
      detail: 'limit 500 exceeds 100',
      code: 'limit_too_large',
      max_limit: 100,
      instance: '/api/orders',
    });
  });

  it('never lets an extension member overwrite the standard members', () => {
    const err = new KeysetError('invalid_request', { extensions: { status: 200, code: 'ok', field: 'date' } });
    const { body } = toProblem(err);
    expect(body.status).toBe(400);
    expect(body.code).toBe('invalid_request');
    expect(body.field).toBe('date');
  });

  it('turns an unknown error into a bare 500 that reveals nothing of it', () => {
    const { status, body } = toProblem(new Error('connection string postgres://u:secret@db'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('secret');
    expect(body.code).toBe('internal_error');
  });

  it('adds WWW-Authenticate to 401 problems', () => {
    const { status, headers, body } = toProblem(new AuthenticationError('missing_api_key', { realm: 'orders' }));
    expect(status).toBe(401);
    expect(headers['www-authenticate']).toBe('ApiKey realm="orders"');
    expect(body.code).toBe('missing_api_key');
  });
});

describe('isKeysetError', () => {
  it('recognises errors by brand, not only by class identity', () => {
    const err = new KeysetError('not_found');
    expect(isKeysetError(err)).toBe(true);
    // A copy of the package loaded twice has another class, but the same registered symbol.
    const foreign = Object.assign(new Error('x'), { [Symbol.for('keyset.error')]: true });
    expect(isKeysetError(foreign)).toBe(true);
    expect(isKeysetError(new Error('x'))).toBe(false);
    expect(isKeysetError(null)).toBe(false);
  });
});

describe('KeysetError construction', () => {
  it('redacts key-shaped text in its cause: message, stack and the cause chain, plain or percent-encoded, in place', () => {
    const secret = 'ks_live_0123456789abcdefghijABCDEFGHIJKLMNq7Zx';
    const inner = new Error(`socket closed while reading /api/keys/${secret}`);
    const framework = Object.assign(new Error(`URL /api/keys/${encodeURIComponent(secret).replace('ks_', 'ks%5F')}%ZZ is malformed`, { cause: inner }), { code: 'FST_ERR_BAD_URL' });
    const err = new KeysetError('invalid_request', { detail: 'The path is not valid.', cause: framework });
    expect(err.cause).toBe(framework); // the same object, still comparable
    expect((err.cause as { code?: string }).code).toBe('FST_ERR_BAD_URL');
    for (const text of [framework.message, framework.stack, inner.message, inner.stack]) {
      expect(text).not.toContain('0123456789abcdefghij');
      expect(text).toContain('q7Zx'); // the last 4, as everywhere a key is shown
    }
    expect(framework.stack).toContain('at '); // a stack it was, a stack it stays
    const plain = new Error('nothing secret here');
    const stackBefore = plain.stack;
    new KeysetError('not_found', { cause: plain });
    expect([plain.message, plain.stack]).toEqual(['nothing secret here', stackBefore]);
    const frozen = Object.freeze(new Error(`frozen ${secret}`));
    expect(() => new KeysetError('not_found', { cause: frozen })).not.toThrow();
    expect(() => new KeysetError('not_found', { cause: `a string ${secret}` })).not.toThrow();
  });

  it('captures no stack trace (a client error needs none) and leaves the global limit as it was', () => {
    const before = Error.stackTraceLimit;
    const err = new KeysetError('invalid_cursor', { cause: new Error('inner') });
    expect(Error.stackTraceLimit).toBe(before);
    expect(err.stack?.split('\n').filter((l) => l.trim().startsWith('at ')) ?? []).toEqual([]);
    // The underlying failure keeps its own stack.
    expect((err.cause as Error).stack).toContain('at ');
    expect(new Error('x').stack).toContain('at ');
  });
});
