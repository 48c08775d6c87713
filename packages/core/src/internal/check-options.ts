/**
 * Options checked at run time, not only by TypeScript. A misspelt option is otherwise
 * silently ignored, and some are security settings: `createKeyring({ pepperr })` would run
 * without its pepper. Every factory calls `assertKnownOptions` first; an unknown name throws a
 * `ConfigError` that names it with its path and suggests the closest known name:
 *
 *     createApiKeyGuard: unknown option `limitter` (did you mean `limiter`?)
 *
 * The known names sit next to each options interface as an object typed
 * `satisfies KnownOptions<XOptions>`, so adding an option to the interface without adding
 * it to the list (or listing a name the interface lacks) fails to compile.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { clipInput } from './clip-input.ts';

/**
 * How one option is checked: `true` accepts any value and is not descended into (a store,
 * a client, a logger, a clock, a map of names); a nested shape checks the value's own
 * names when it is a plain object, and those of each plain object in it when it is an
 * array.
 */
export type OptionRule = true | OptionShape;

/** The known names of an options object, each with its rule. */
export interface OptionShape {
  readonly [name: string]: OptionRule;
}

/** Every key of every object in a union (`keyof (A | B)` holds only the common ones; `false` adds none). */
type KeysOfUnion<T> = T extends object ? keyof T : never;
/** The type of `K` in whichever members of `T` have it. */
type ValueOfUnion<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
/** The objects an option's value can hold: itself, or the elements of an array. */
type NestedObjects<V> = V extends readonly (infer E)[] ? Extract<E, object> : Exclude<Extract<V, object>, (...args: never[]) => unknown>;

/**
 * The known-names object for options of type `T`: exactly its keys (of every member of a
 * union), each `true` or, for a nested options object, the known names of that object.
 *
 * @example
 * ```ts
 * const KNOWN = { store: true, cache: { max: true, ttlMs: true } } as const satisfies KnownOptions<MyOptions>;
 * ```
 */
export type KnownOptions<T> = {
  readonly [K in KeysOfUnion<T> & string]-?: true | ([NestedObjects<NonNullable<ValueOfUnion<T, K>>>] extends [never] ? never : KnownOptions<NestedObjects<NonNullable<ValueOfUnion<T, K>>>>);
};

/** Longest option name quoted in a message; longer text is not shown (see `clipInput`). */
const MAX_QUOTED = 64;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment, the restricted
 * Damerau-Levenshtein distance): `defualt` is one edit from `default`, not two.
 */
export function editDistance(a: string, b: string): number {
  // Three rows of the dynamic-programming table: the transposition looks two rows back.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

/**
 * The known name `name` most likely misspells, or `undefined` when none is close. Case is
 * ignored (`TTLSeconds` → `ttlSeconds`); otherwise a name within a third of its length in
 * edits (at least one) is close; of several, the nearest, then the first listed.
 *
 * @example
 * ```ts
 * closestName('limitter', ['keyring', 'limiter', 'realm']); // 'limiter'
 * closestName('store', ['keyring', 'limiter']); // undefined
 * ```
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  // Names far longer than any option cannot be one of them; skip the quadratic table.
  if (lower.length > 100) return undefined;
  const maxDistance = Math.max(1, Math.floor(lower.length / 3));
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const candidate of known) {
    const target = candidate.toLowerCase();
    if (Math.abs(target.length - lower.length) >= bestDistance) continue;
    const distance = editDistance(lower, target);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function refuse(where: string, path: string, name: string, shape: OptionShape): never {
  const names = Object.keys(shape);
  const suggestion = closestName(name, names);
  // A name within a few edits of an option's name is a typo of it and is quoted as written;
  // any other goes through `clipInput`, as client text would (it could be pasted key text).
  const quoted = path + (suggestion !== undefined ? name : clipInput(name, MAX_QUOTED));
  const hint = suggestion !== undefined ? `did you mean \`${path}${suggestion}\`?` : `known: ${names.map((n) => `\`${path}${n}\``).join(', ') || 'none'}`;
  throw new ConfigError(`${where}: unknown option \`${quoted}\` (${hint})`);
}

function checkShape(where: string, value: Record<string, unknown>, shape: OptionShape, path: string): void {
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(shape, name)) refuse(where, path, name, shape);
    const rule = shape[name]!;
    if (rule !== true) checkNested(where, value[name], rule, `${path}${name}`);
  }
}

function checkNested(where: string, value: unknown, shape: OptionShape, path: string): void {
  if (isPlainObject(value)) {
    checkShape(where, value, shape, `${path}.`);
  } else if (Array.isArray(value)) {
    value.forEach((element, index) => {
      if (isPlainObject(element)) checkShape(where, element, shape, `${path}[${index}].`);
    });
  }
}

/**
 * Throws a `ConfigError` when `options` holds a name `known` does not list, at any depth
 * `known` describes; `where` (the factory's name) starts the message, and `path` (e.g.
 * `fields[2]`, for one of several option objects) comes before each name in it. `undefined` passes
 * (the factory's defaults apply); anything else that is not a plain object is refused.
 * Values are not checked here: the factory goes on to do that.
 *
 * @example
 * ```ts
 * const KNOWN = { keyring: true, limiter: true, realm: true, trustProxy: { hops: true, cidrs: true } } as const satisfies KnownOptions<ApiKeyGuardOptions>;
 * assertKnownOptions('createApiKeyGuard', { limitter }, KNOWN);
 * // ConfigError: createApiKeyGuard: unknown option `limitter` (did you mean `limiter`?)
 * ```
 */
export function assertKnownOptions(where: string, options: unknown, known: OptionShape, path?: string): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const got = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
    throw new ConfigError(`${where}: ${path === undefined ? 'options' : `\`${path}\``} must be an object, got ${got}`);
  }
  // A class instance passed as options is read like any object; only its own names count.
  checkShape(where, options as Record<string, unknown>, known, path === undefined ? '' : `${path}.`);
}
