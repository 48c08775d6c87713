/**
 * `hasDuplicateMember` against a model: random JSON values (strings full of braces, quotes,
 * colons and escapes included) serialised by `JSON.stringify` never have duplicates; the
 * same text with one object's member repeated (spelt the same, or with an escaped
 * character) always has.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasDuplicateMember } from './duplicate-members.ts';

const tricky = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '\\', 'a', 't', ' ', '\u00e9', '\n') });
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
})).value;

describe('hasDuplicateMember', () => {
  it('finds none in what JSON.stringify writes', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(hasDuplicateMember(JSON.stringify(value))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('finds a member repeated in any object at any depth, escaped or not', () => {
    fc.assert(
      fc.property(json, fc.string({ minLength: 1, maxLength: 8 }), fc.boolean(), (value, name, escape) => {
        const repeated = escape ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name.slice(1)).slice(1)}` : JSON.stringify(name);
        const text = `{"outer":${JSON.stringify(value)},"x":[{${JSON.stringify(name)}:1,"y":{},${repeated}:2}]}`;
        expect(JSON.parse(text)).toBeTruthy();
        expect(hasDuplicateMember(text)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('reads the examples', () => {
    expect(hasDuplicateMember('[{"token":"a","token":"b"}]')).toBe(true);
    expect(hasDuplicateMember('[{"token":"a"},{"token":"b"}]')).toBe(false);
    expect(hasDuplicateMember('[{"token":"{\\"token\\":1}","type":"t"}]')).toBe(false);
    expect(hasDuplicateMember('[{"a":{"b":1},"b":2}]')).toBe(false);
    expect(hasDuplicateMember('[{"a":{"b":1,"b":2}}]')).toBe(true);
    expect(hasDuplicateMember('{"tok\\u0065n":1, "token" :2}')).toBe(true);
  });
});
