/**
 * The public keys GitHub signs secret-scanning alerts with, imported for Web Crypto and
 * cached on the instance. An unknown key id triggers one refresh (GitHub rotates keys by
 * publishing the new one first), at most once per `minRefreshMs` counted from the last
 * fetch, failed or not, so a stream of forged ids cannot turn the endpoint into a fetch
 * amplifier; an id still unknown after that is refused, never trusted.
 * @module
 */
import type { Clock } from '../clock.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { decodeBase64 } from './base64.ts';

/** One entry of GitHub's `GET /meta/public_keys/secret_scanning` (`public_keys[]`). */
export interface GitHubPublicKey {
  key_identifier: string;
  /** PEM `-----BEGIN PUBLIC KEY-----` (SPKI) of an ECDSA P-256 key. */
  key: string;
  is_current?: boolean;
}

/** Where the keys come from: a URL answering GitHub's JSON, or a function returning the list. */
export type PublicKeySource = string | { fetch(): Promise<readonly GitHubPublicKey[]> };

/** The cache of one handler. */
export interface PublicKeyCache {
  /**
   * The imported key for `id`, refreshing once if unknown (at most once per quiet time);
   * `undefined` when the list as last fetched has none. Rejects with 503 `unavailable`
   * when the id is unknown and the last fetch failed.
   */
  get(id: string): Promise<CryptoKey | undefined>;
}

/** GitHub's endpoint for these keys. */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** How long one fetch of the key list may take. */
const FETCH_TIMEOUT_MS = 10_000;

function fromUrl(url: string): () => Promise<readonly GitHubPublicKey[]> {
  return async () => {
    // A source that never answers must not hold every alert (and the fetch slot) for good.
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`public key source answered ${response.status}`);
    const body = (await response.json()) as { public_keys?: unknown };
    if (!Array.isArray(body.public_keys)) throw new Error('public key source answered without public_keys');
    return body.public_keys as GitHubPublicKey[];
  };
}

async function importPem(pem: string): Promise<CryptoKey | undefined> {
  const match = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  const der = match === null ? undefined : decodeBase64(match[1]!.replace(/\s+/g, ''));
  if (der === undefined) return undefined;
  try {
    return await crypto.subtle.importKey('spki', new Uint8Array(der), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  } catch {
    return undefined; // not a P-256 key: never verifies anything
  }
}

/**
 * A cache over `source`. Every fetch, failed or not, starts a quiet time of `minRefreshMs`
 * in which nothing is fetched again, whatever key id an alert names: a stream of forged
 * ids cannot make the handler fetch per request, nor, against a source that rate-limits
 * by address (GitHub's unauthenticated API), keep the list from ever loading. An id the
 * cache lacks is refused (`undefined`) only when a fetch made for it succeeded without
 * it; in a quiet time, or when that fetch failed, `get` rejects with 503 `unavailable`
 * and a `Retry-After` for the rest of the quiet time (see `keySourceUnavailable`).
 */
export function createPublicKeyCache(source: PublicKeySource, clock: Clock, minRefreshMs: number): PublicKeyCache {
  if (typeof source !== 'string' && typeof source?.fetch !== 'function') {
    throw new ConfigError('createLeakAlertHandler: publicKeys must be a URL or { fetch(): Promise<{ key_identifier, key }[]> }');
  }
  const load = typeof source === 'string' ? fromUrl(source) : () => source.fetch();
  let keys = new Map<string, CryptoKey>();
  /** When the last fetch started; nothing is fetched again before `fetchedAt + minRefreshMs`. */
  let fetchedAt = -Infinity;
  /** Why the last fetch failed; `undefined` once one succeeded. */
  let failure: unknown;
  let loading: Promise<void> | undefined;

  const refresh = (): Promise<void> => {
    fetchedAt = clock();
    loading ??= (async () => {
      try {
        const list = await load();
        const next = new Map<string, CryptoKey>();
        for (const entry of Array.isArray(list) ? list : []) {
          if (typeof entry?.key_identifier !== 'string' || typeof entry.key !== 'string') continue;
          const key = await importPem(entry.key);
          if (key !== undefined) next.set(entry.key_identifier, key);
        }
        keys = next;
        failure = undefined;
      } catch (error) {
        failure = error;
      } finally {
        loading = undefined;
      }
    })();
    return loading;
  };

  return Object.freeze({
    async get(id: string): Promise<CryptoKey | undefined> {
      const known = keys.get(id);
      if (known !== undefined) return known;
      if (loading === undefined && clock() - fetchedAt < minRefreshMs) {
        // Fetched moments ago, and the id was not there: it may be the key GitHub signs
        // with next, published since. Not a refusal (GitHub would drop the alert) but
        // "try again once a fetch is allowed".
        throw keySourceUnavailable(failure, fetchedAt + minRefreshMs - clock());
      }
      await (loading ?? refresh());
      const key = keys.get(id);
      if (key === undefined && failure !== undefined) throw keySourceUnavailable(failure, fetchedAt + minRefreshMs - clock());
      return key;
    },
  });
}

/**
 * 503 `unavailable` with `Retry-After` (RFC 9110 §10.2.3) in whole seconds, at least 1:
 * a 5xx says the failure is on this side and the same request may succeed later, where
 * a 4xx says the request itself is wrong and is not worth sending again. `failure` is the
 * last fetch's error, or `undefined` when the list loaded but lacks the id.
 */
function keySourceUnavailable(failure: unknown, waitMs: number): KeysetError {
  const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return failure === undefined
    ? new KeysetError('unavailable', {
        detail: `The alert names a signing key the list fetched moments ago lacks; send it again in ${retryAfter} s.`,
        headers: { 'retry-after': retryAfter },
      })
    : new KeysetError('unavailable', {
        detail: `The signing keys could not be fetched; send the alert again in ${retryAfter} s.`,
        cause: failure,
        headers: { 'retry-after': retryAfter },
      });
}
