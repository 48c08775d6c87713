/**
 * The query a cursor belongs to: endpoint, sort spec and filters, hashed into one
 * string that the cursor's signature covers. A cursor from `?status=paid` is refused on
 * `?status=open`, from `/orders` on `/keys`, and after the sort spec changes.
 * @module
 */
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { encodeBase64url } from '../internal/base64url.ts';
import { canonicalJson } from '../internal/canonical-json.ts';
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
