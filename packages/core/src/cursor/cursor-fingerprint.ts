/**
 * The query a cursor belongs to: endpoint, sort spec and filters, hashed into one
 * string that the cursor's signature covers. A cursor from `?status=paid` is refused on
 * `?status=open`, from `/orders` on `/keys`, and after the sort spec changes.
 *
 * The filters are hashed in a canonical text (`canonicalJson`, at the end): equal filters
 * give one text whatever their key order, and values of different types never collide.
 * @module
 */
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { encodeBase64url } from '../internal/base64url.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import type { SortSpec } from '../pagination/types.ts';

/** What a cursor is bound to. */
export interface CursorScope {
  /** Names the collection, e.g. `'GET /api/orders'`. */
  endpoint: string;
  sort: SortSpec;
  /** The query's own filters; key order does not matter. `undefined` members are ignored. */
  filters?: Record<string, unknown>;
}

/** Canonical text of the endpoint + sort part, computed once per paginator. */
export function scopePrefix(endpoint: string, sort: SortSpec): string {
  const keys = sort.map((k) => [k.key, k.column, k.dir, k.type, k.nullable ? k.nullable.nulls : false, k.unique === true]);
  return `keyset-fp-v1\u0000${JSON.stringify(endpoint)}\u0000${JSON.stringify(keys)}\u0000`;
}

/** Fingerprint of a precomputed prefix plus filters. */
export async function fingerprintWith(crypto: CryptoProvider, prefix: string, filters: Record<string, unknown> | undefined): Promise<string> {
  return encodeBase64url(await crypto.sha256(prefix + canonicalJson(filters ?? {})));
}

/**
 * SHA-256 fingerprint (base64url) of a cursor's scope, for custom sources that use
 * `createCursorCodec` directly. `createPaginator` computes it for you (`plan.fingerprint`).
 * Throws `TypeError` when filters hold functions, symbols, non-plain objects (Set, Map, class instances) or cycles.
 *
 * @example
 * ```ts
 * const fp = await cursorFingerprint({ endpoint: 'GET /api/orders', sort, filters: { status: 'paid' } });
 * const cursor = await codec.encode(position, fp, sort);
 * ```
 */
export function cursorFingerprint(scope: CursorScope, crypto: CryptoProvider = defaultCrypto): Promise<string> {
  return fingerprintWith(crypto, scopePrefix(scope.endpoint, scope.sort), scope.filters);
}

/** Distinct filter sets remembered per paginator; a bounded map, so client-chosen filters cannot grow it. */
const FINGERPRINT_CACHE_SIZE = 1024;

/**
 * Fingerprints of one paginator's scope, memoised by the canonical filters: the same
 * query shape is hashed once, not on every request (a SHA-256 costs more than the
 * rest of planning together).
 */
export function createFingerprintCache(
  crypto: CryptoProvider,
  prefix: string,
): { get(filters: Record<string, unknown> | undefined): Promise<string> | string } {
  const cache = new Map<string, string>();
  return {
    get(filters) {
      const canonical = canonicalJson(filters ?? {});
      const hit = cache.get(canonical);
      if (hit !== undefined) return hit;
      return Promise.resolve(crypto.sha256(prefix + canonical)).then((digest) => {
        const fingerprint = encodeBase64url(digest);
        if (cache.size >= FINGERPRINT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(canonical, fingerprint);
        return fingerprint;
      });
    },
  };
}

/** How deep filters may nest: deeper is refused (a cycle reaches it too). */
const MAX_DEPTH = 32;

/**
 * Canonical text of `value`: a type-preserving serialisation used only as hash input
 * (cursor fingerprints), never parsed back. Object keys are sorted, so `{ a, b }` and
 * `{ b, a }` agree; values JSON cannot hold losslessly get unambiguous bare tokens that no
 * JSON string can produce (`12n` for a bigint, `@2024-05-01T10:00:00.000Z` for a Date,
 * `undefined`, `NaN`, `Infinity`), so `5n` and `"5"` never collide. Throws `TypeError` for
 * functions, symbols, non-plain objects (Set, Map, class instances), cycles or depth > 32.
 * Internal: not exported from the package.
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
