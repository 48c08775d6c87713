/**
 * The frozen copy of a query's filters that a plan carries.
 * @module
 */

/**
 * `Object.freeze({ ...given })`, made faster for the filters every request brings. The
 * own enumerable string keys are copied by plain stores into a fresh object, which V8
 * freezes along a cached map transition; an object made by spread has a map with no
 * frozen twin, and freezing it makes a new one on every request. A store is not a
 * spread's define for a key the prototype holds (`__proto__`'s setter, an accessor added
 * to `Object.prototype`), and a spread also copies symbol keys: such filters, and values
 * that are not objects, still take the spread, checked before any value is read so no
 * getter runs twice. Internal: not exported from the package.
 */
export function frozenFilters(given: Record<string, unknown>): Readonly<Record<string, unknown>> {
  if (typeof given !== 'object' || given === null) return Object.freeze({ ...(given as object) }) as Readonly<Record<string, unknown>>;
  // Every own string key, as a spread lists them before reading any: each is copied only if
  // it is still an own enumerable member when its turn comes (a getter read earlier may
  // have deleted it, or changed whether it is enumerable), as a spread checks.
  const keys = Object.getOwnPropertyNames(given);
  for (let i = 0; i < keys.length; i++) if ((keys[i] as string) in OBJECT_PROTOTYPE) return Object.freeze({ ...given });
  if (Object.getOwnPropertySymbols(given).length !== 0) return Object.freeze({ ...given });
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (isEnumerable.call(given, key)) copy[key] = given[key];
  }
  return Object.freeze(copy);
}

const OBJECT_PROTOTYPE: object = Object.prototype;
const isEnumerable = Object.prototype.propertyIsEnumerable;
