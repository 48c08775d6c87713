/**
 * `frozenFilters(x)` is `Object.freeze({ ...x })`: same own keys in the same order, same
 * descriptors, same prototype, frozen, on random filters — including own `__proto__`,
 * `toString` and integer-like keys, symbol keys, non-enumerable members, getters,
 * null-prototype and array sources, and values that are not objects.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frozenFilters } from './paginator.ts';

const SYMBOL = Symbol('filter');
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'toString', 'constructor', 'hasOwnProperty', '0', '1', '10', '-1', 'status'));
const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }));

/** Random filters: members defined (not assigned) so `__proto__` becomes an own key; some extras on top. */
const filters = fc
  .record({
    members: fc.array(fc.tuple(key, value), { maxLength: 6 }),
    nullPrototype: fc.boolean(),
    symbol: fc.boolean(),
    hidden: fc.boolean(),
    getter: fc.boolean(),
    array: fc.boolean(),
  })
  .map(({ members, nullPrototype, symbol, hidden, getter, array }) => {
    const target: Record<PropertyKey, unknown> = array ? ([] as unknown as Record<PropertyKey, unknown>) : nullPrototype ? Object.create(null) : {};
    for (const [k, v] of members) {
      // An array's own `length` cannot be redefined as enumerable: not a member to draw.
      if (array && k === 'length') continue;
      Object.defineProperty(target, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    if (symbol) target[SYMBOL] = 'symbol value';
    if (hidden) Object.defineProperty(target, 'hidden', { value: 1, enumerable: false });
    if (getter) Object.defineProperty(target, 'computed', { get: () => 'got', enumerable: true });
    return target as Record<string, unknown>;
  });

function expectSameCopy(actual: object, expected: object): void {
  expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected));
  expect(Object.isFrozen(actual)).toBe(true);
  expect(Reflect.ownKeys(actual)).toEqual(Reflect.ownKeys(expected));
  for (const k of Reflect.ownKeys(expected)) expect(Object.getOwnPropertyDescriptor(actual, k)).toEqual(Object.getOwnPropertyDescriptor(expected, k));
}

describe('frozenFilters', () => {
  it('copies exactly what a frozen spread copies', () => {
    fc.assert(
      fc.property(filters, (given) => {
        const copy = frozenFilters(given);
        expect(copy).not.toBe(given);
        expectSameCopy(copy, Object.freeze({ ...given }));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads each getter once, and copies values that are not plain objects like a spread', () => {
    let reads = 0;
    const counted = Object.defineProperty({ status: 'paid' }, 'region', { get: () => `eu-${++reads}`, enumerable: true });
    expect(frozenFilters(counted)).toEqual({ status: 'paid', region: 'eu-1' });
    expect(reads).toBe(1);
    const withSymbol = Object.defineProperty({ status: 'paid', [SYMBOL]: 1 }, 'region', { get: () => `eu-${++reads}`, enumerable: true });
    expect(frozenFilters(withSymbol)).toEqual({ status: 'paid', region: 'eu-2', [SYMBOL]: 1 });
    expect(reads).toBe(2);
    for (const odd of [null, undefined, 'ab', 42, Object.assign(() => 0, { a: 1 })]) {
      expectSameCopy(frozenFilters(odd as unknown as Record<string, unknown>), Object.freeze({ ...(odd as object) }));
    }
  });

  it('copies like a spread when a getter deletes, hides or shows other members while it is read', () => {
    const member = fc.constantFrom('a', 'b', 'c', 'd');
    const action = fc.record({ kind: fc.constantFrom('delete' as const, 'hide' as const, 'show' as const), target: member });
    const shape = fc.array(fc.record({ name: member, enumerable: fc.boolean(), actions: fc.array(action, { maxLength: 2 }) }), { maxLength: 4 });
    const build = (members: { name: string; enumerable: boolean; actions: { kind: 'delete' | 'hide' | 'show'; target: string }[] }[]): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (const { name, enumerable, actions } of members) {
        if (Object.prototype.hasOwnProperty.call(o, name)) continue;
        Object.defineProperty(o, name, {
          enumerable,
          configurable: true,
          get() {
            for (const { kind, target } of actions) {
              const desc = Object.getOwnPropertyDescriptor(o, target);
              if (desc === undefined || target === name) continue;
              if (kind === 'delete') delete o[target];
              else Object.defineProperty(o, target, { enumerable: kind === 'show' });
            }
            return name;
          },
        });
      }
      return o;
    };
    fc.assert(
      fc.property(shape, (members) => {
        expectSameCopy(frozenFilters(build(members)), Object.freeze({ ...build(members) }));
      }),
      { numRuns: 3000 },
    );
  });
});
