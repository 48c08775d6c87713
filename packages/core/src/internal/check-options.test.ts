/**
 * `assertKnownOptions`: an unknown option name is a `ConfigError` naming it with its path and
 * the closest known name; known names, `undefined` options and values it must not
 * descend into pass. The factories' own refusals are in `test/unknown-options.prop.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { generateKey } from '../keys/key-format.ts';
import { assertKnownOptions, closestName, editDistance, type OptionShape } from './check-options.ts';

const SHAPE: OptionShape = {
  keyring: true,
  limiter: true,
  realm: true,
  cursor: { secrets: true, ttlSeconds: true },
  limits: { default: true, max: true, overMax: true },
  policies: { limit: true, windowSeconds: true },
};

function refusal(options: unknown, shape: OptionShape = SHAPE): string {
  try {
    assertKnownOptions('createThing', options, shape);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('assertKnownOptions', () => {
  it('names an unknown top-level option and suggests the closest known one', () => {
    expect(refusal({ keyring: {}, limitter: {} })).toBe('createThing: unknown option `limitter` (did you mean `limiter`?)');
  });

  it('names nested options by their path', () => {
    expect(refusal({ cursor: { secrets: ['x'], ttlSecond: 60 } })).toBe('createThing: unknown option `cursor.ttlSecond` (did you mean `cursor.ttlSeconds`?)');
    expect(refusal({ limits: { defualt: 10 } })).toBe('createThing: unknown option `limits.defualt` (did you mean `limits.default`?)');
  });

  it('checks each object of an array option, naming its index', () => {
    expect(refusal({ policies: [{ limit: 1, windowSeconds: 1 }, { limit: 1, windowSecond: 1 }] })).toBe(
      'createThing: unknown option `policies[1].windowSecond` (did you mean `policies[1].windowSeconds`?)',
    );
    // A single object where an array may also stand is checked the same way.
    expect(refusal({ policies: { limt: 1 } })).toBe('createThing: unknown option `policies.limt` (did you mean `policies.limit`?)');
  });

  it('lists the known names when none is close', () => {
    expect(refusal({ cursor: { zzzzzz: 1 } })).toBe('createThing: unknown option `cursor.zzzzzz` (known: `cursor.secrets`, `cursor.ttlSeconds`)');
  });

  it('refuses an unknown name whatever its value, undefined included', () => {
    expect(refusal({ pepperr: undefined }, { pepper: true })).toContain('`pepperr` (did you mean `pepper`?)');
  });

  it('accepts known names at every depth, and no options at all', () => {
    expect(() => assertKnownOptions('createThing', undefined, SHAPE)).not.toThrow();
    expect(() => assertKnownOptions('createThing', {}, SHAPE)).not.toThrow();
    expect(() =>
      assertKnownOptions('createThing', { keyring: {}, realm: 'api', cursor: { secrets: [] }, limits: { max: 5 }, policies: [{ limit: 1, windowSeconds: 2 }] }, SHAPE),
    ).not.toThrow();
  });

  it('does not descend into values whose rule is `true`, nor into class instances, maps or functions', () => {
    const store = { anything: 1, goes: 2 };
    expect(() => assertKnownOptions('createThing', { keyring: store, limiter: new Map([['x', 1]]) }, SHAPE)).not.toThrow();
    class CursorSettings {
      unrelated = 1;
    }
    const fn = Object.assign(() => 0, { unrelated: 1 });
    expect(() => assertKnownOptions('createThing', { cursor: new CursorSettings(), limits: fn }, SHAPE)).not.toThrow();
    // Primitives and null where a nested object may stand are the factory's to judge.
    expect(() => assertKnownOptions('createThing', { cursor: null, limits: false, policies: [1, null] }, SHAPE)).not.toThrow();
  });

  it('reads only own enumerable names: prototype members and symbols are not options', () => {
    const inherited = Object.create({ limitter: 1 }) as object;
    expect(() => assertKnownOptions('createThing', inherited, SHAPE)).not.toThrow();
    expect(() => assertKnownOptions('createThing', { [Symbol('x')]: 1 }, SHAPE)).not.toThrow();
    // An own `__proto__` (as JSON.parse makes it) is a name like any other.
    expect(refusal(JSON.parse('{"__proto__": {"realm": 1}}'))).toContain('unknown option `__proto__`');
  });

  it('refuses options that are not an object', () => {
    for (const [options, got] of [
      [null, 'null'],
      ['realm', 'string'],
      [[{ realm: 'x' }], 'an array'],
      [7, 'number'],
    ] as const) {
      expect(refusal(options)).toBe(`createThing: options must be an object, got ${got}`);
    }
    expect(() => assertKnownOptions('createSortParam', 'x', SHAPE, 'sortable[2]')).toThrow('createSortParam: `sortable[2]` must be an object, got string');
  });

  it('prefixes names with the path it is given', () => {
    expect(() => assertKnownOptions('createSortParam', { nmae: 'x' }, { name: true, type: true }, 'sortable[2]')).toThrow(
      'createSortParam: unknown option `sortable[2].nmae` (did you mean `sortable[2].name`?)',
    );
  });

  it('never quotes key text, and does not quote a long name', () => {
    const key = generateKey('acme_live');
    const message = refusal({ [key]: 1 });
    expect(message).not.toContain(key.slice(10, 18));
    const long = 'x-'.repeat(50);
    expect(refusal({ [long]: 1 })).toContain('unknown option `…(100 characters)`');
  });
});

describe('editDistance (optimal string alignment)', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['', 'abc', 3],
    ['limiter', 'limiter', 0],
    ['limitter', 'limiter', 1],
    ['defualt', 'default', 1],
    ['ttlSecond', 'ttlSeconds', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3],
    ['abcd', 'badc', 2],
  ])('%j → %j is %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closestName', () => {
  const known = ['keyring', 'limiter', 'realm', 'trustProxy'];

  it('suggests across case, typos and transpositions', () => {
    expect(closestName('limitter', known)).toBe('limiter');
    expect(closestName('LIMITER', known)).toBe('limiter');
    expect(closestName('trustproxy', known)).toBe('trustProxy');
    expect(closestName('relam', known)).toBe('realm');
    expect(closestName('kering', known)).toBe('keyring');
  });

  it('suggests nothing when no name is close', () => {
    expect(closestName('store', known)).toBeUndefined();
    expect(closestName('x', ['ab', 'cd'])).toBeUndefined();
    expect(closestName('y'.repeat(200), known)).toBeUndefined();
  });

  it('takes the nearest name, then the first listed', () => {
    expect(closestName('maz', ['max', 'may'])).toBe('max');
    expect(closestName('ttlMs', ['negativeTtlMs', 'ttlMs'])).toBe('ttlMs');
    expect(closestName('ttlMz', ['max', 'ttlMs'])).toBe('ttlMs');
  });
});
