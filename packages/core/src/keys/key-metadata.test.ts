import { describe, expect, it } from 'vitest';
import { KeysetError } from '../errors.ts';
import { MAX_METADATA_BYTES, validateMetadata } from './key-metadata.ts';

function refusal(value: unknown): KeysetError {
  try {
    validateMetadata(value);
  } catch (error) {
    if (error instanceof KeysetError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('validateMetadata', () => {
  it('keeps a JSON object as a deep frozen copy, member order and `__proto__` members included', () => {
    const input = JSON.parse('{"plan":"pro","__proto__":{"admin":true},"tags":["a",{"b":null}],"n":1.5}') as Record<string, unknown>;
    const metadata = validateMetadata(input);
    expect(JSON.stringify(metadata)).toBe(JSON.stringify(input));
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['admin']).toBeUndefined();
    expect(Object.isFrozen(metadata) && Object.isFrozen(metadata['tags']) && Object.isFrozen((metadata['tags'] as unknown[])[1])).toBe(true);
    (input['tags'] as unknown[]).push('later');
    expect(metadata['tags']).toHaveLength(2);
  });

  it('reads null and undefined as {}', () => {
    expect(validateMetadata(undefined)).toEqual({});
    expect(validateMetadata(null)).toEqual({});
  });

  it('accepts exactly the byte limit and refuses one byte more, counting UTF-8 bytes', () => {
    const fill = (bytes: number): Record<string, string> => ({ a: 'x'.repeat(bytes - '{"a":""}'.length) });
    expect(() => validateMetadata(fill(MAX_METADATA_BYTES))).not.toThrow();
    expect(refusal(fill(MAX_METADATA_BYTES + 1)).detail).toMatch(/4097 bytes as JSON; at most 4096/);
    // 'é' is 2 bytes in UTF-8: half as many fit.
    expect(refusal({ a: 'é'.repeat(2100) }).detail).toMatch(/bytes as JSON/);
  });

  it.each<[string, unknown, RegExp]>([
    ['an array', [1, 2], /must be a JSON object/],
    ['a string', 'x', /must be a JSON object/],
    ['a function member', { a: 1, f: () => 1 }, /JSON values only \(at \$\.#2: function\)/],
    ['undefined member', { u: undefined }, /JSON values only/],
    ['a bigint', { b: 1n }, /JSON values only/],
    ['a Date', { d: new Date(0) }, /plain objects only/],
    ['NaN', { n: Number.NaN }, /finite/],
    ['Infinity in an array', { a: [Infinity] }, /finite \(at \$\.#1\[0\]\)/],
    ['U+0000', { s: 'a\u0000b' }, /U\+0000/],
    ['a lone surrogate', { s: '\uD800' }, /unpaired surrogates/],
    ['a lone surrogate in a name', { ['\uDC00']: 1 }, /member names/],
    ['too deep', { a: { b: { c: { d: { e: { f: 1 } } } } } }, /deeper than 5/],
    ['too many members', Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])), /at most 100 members/],
    ['too many items', { a: Array.from({ length: 101 }, () => 0) }, /at most 100 items/],
  ])('refuses %s with 400 invalid_request naming `metadata`', (_, value, detail) => {
    const error = refusal(value);
    expect([error.status, error.code, error.extensions['field']]).toEqual([400, 'invalid_request', 'metadata']);
    expect(error.detail).toMatch(detail);
  });

  it('names members by position, never by the name sent', () => {
    const name = 'OiLzh74MVrNeFH1NUbItx';
    const error = refusal({ plan: 'pro', team: { [name]: Infinity } });
    expect(error.detail).toMatch(/finite \(at \$\.#2\.#1\)/);
    expect(error.detail).not.toContain(name.slice(0, 8));
  });

  it('refuses a cycle instead of recursing forever', () => {
    const a: Record<string, unknown> = {};
    a['self'] = a;
    expect(refusal(a).detail).toMatch(/deeper than/);
  });
});
