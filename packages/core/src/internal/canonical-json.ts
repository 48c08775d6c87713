/**
 * Canonical, type-preserving serialisation used only as MAC/hash input (cursor
 * fingerprints), never parsed back. Object keys are sorted, so `{ a, b }` and `{ b, a }`
 * agree; values JSON cannot hold losslessly get unambiguous bare tokens that no JSON
 * string can produce (`12n` for a bigint, `@2024-05-01T10:00:00.000Z` for a Date,
 * `undefined`, `NaN`, `Infinity`), so `5n` and `"5"` never collide.
 * @module
 */

const MAX_DEPTH = 32;

/**
 * Canonical text of `value`. Throws `TypeError` for functions, symbols, non-plain objects
 * (Set, Map, class instances), cycles or depth > 32.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw new TypeError('filters nest deeper than 32 levels (or contain a cycle)');
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
      if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
      // Only plain objects (of any realm): a Set, Map, RegExp or class instance keeps its
      // contents where Object.keys cannot see them, so every one would read as `{}` and a
      // cursor issued for one filter value would verify for any other.
      const proto = Object.getPrototypeOf(value) as object | null;
      if (proto !== null && Object.getPrototypeOf(proto) !== null) {
        throw new TypeError(
          `cannot fingerprint a ${(value as object).constructor?.name ?? 'non-plain object'} in filters; pass plain objects, arrays, strings, numbers, bigints, booleans, null or Dates`,
        );
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      // Sorted by UTF-16 code units, as Array#sort does; most filters come sorted already
      // (one or two members), and then no array is sorted, mapped or joined.
      let sorted = true;
      for (let i = 1; i < keys.length && sorted; i++) sorted = (keys[i - 1] as string) < (keys[i] as string);
      if (!sorted) keys.sort();
      let out = '{';
      for (const k of keys) {
        const member = record[k];
        if (member === undefined) continue;
        if (out.length > 1) out += ',';
        out += `${JSON.stringify(k)}:${canonicalJson(member, depth + 1)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`cannot fingerprint a ${typeof value} in filters`);
  }
}
