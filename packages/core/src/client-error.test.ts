import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientErrorStatus, schemaValidationError } from './client-error.ts';
import { KeysetError } from './errors.ts';

describe('clientErrorStatus', () => {
  it('reads a 4xx from status or statusCode, and nothing else', () => {
    expect(clientErrorStatus(Object.assign(new Error('x'), { status: 413 }))).toBe(413);
    expect(clientErrorStatus({ statusCode: 415 })).toBe(415);
    for (const error of [null, undefined, 'x', new Error('x'), { status: 500 }, { status: 399 }, { status: 400.5 }, { status: '400' }, new KeysetError('not_found')]) {
      expect(clientErrorStatus(error), String(error)).toBeUndefined();
    }
  });
});

describe('schemaValidationError', () => {
  it('names the field and the rule of the first failure', () => {
    const required = schemaValidationError({ keyword: 'required', instancePath: '/owner', params: { missingProperty: 'name' } }, 'body');
    expect(required).toMatchObject({ status: 400, code: 'invalid_request', extensions: { field: 'body.owner.name' }, detail: '`body.owner.name` is required.' });
    expect(schemaValidationError({ keyword: 'type', instancePath: '/limit', message: 'must be integer' }, 'querystring').detail).toBe('`query.limit` must be integer.');
    expect(schemaValidationError(undefined, undefined).extensions.field).toBe('request');
  });

  it('never quotes the value sent (property: any params and message-free failure)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 12 }), (value) => {
        const error = schemaValidationError({ keyword: 'pattern', instancePath: '/name', params: { pattern: '^a' }, data: value }, 'body');
        expect(JSON.stringify({ detail: error.detail, extensions: error.extensions })).not.toContain(value);
      }),
    );
  });
});
