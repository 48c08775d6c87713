/**
 * canonicalJson writes objects in one pass (keys sorted only when they are not already);
 * this holds it to the map/filter/sort/join version it replaced, which is kept here as the
 * oracle, on arbitrary nested values: the fingerprint of every filter set is unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './cursor-fingerprint.ts';

function previous(value: unknown, depth = 0): string {
  if (depth > 32) throw new TypeError('filters nest deeper than 32 levels (or contain a cycle)');
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : String(value);
    case 'bigint':
      return `${value}n`;
    case 'undefined':
      return 'undefined';
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof Date) return `@${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()}`;
      if (Array.isArray(value)) return `[${value.map((v) => previous(v, depth + 1)).join(',')}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${previous(record[k], depth + 1)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`cannot fingerprint a ${typeof value} in filters`);
  }
}

describe('canonicalJson against the version it replaced', () => {
  it('gives the same text for arbitrary nested filters (any keys, undefined members, every scalar type)', () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('a', 'b', 'B', 'é', '😀', '\uffff', '10', '2', '__proto__x', ''));
    const scalar = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.bigInt(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.date({ noInvalidDate: false }),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 6 })),
    }));
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), (filters) => {
        expect(canonicalJson(filters)).toBe(previous(filters));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts keys by UTF-16 code units whatever order they were written in', () => {
    expect(canonicalJson({ b: 1, a: 2, B: 3, é: 4, '😀': 5, '\uffff': 6 })).toBe(previous({ b: 1, a: 2, B: 3, é: 4, '😀': 5, '\uffff': 6 }));
    expect(canonicalJson({ 10: 'x', 2: 'y', a: undefined })).toBe('{"10":"x","2":"y"}');
  });
});
