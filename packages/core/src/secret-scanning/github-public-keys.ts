/**
 * The public keys GitHub signs secret-scanning alerts with, imported for Web Crypto and
 * cached on the instance. An unknown key id triggers one refresh (GitHub rotates keys by
 * publishing the new one first), at most once per `minRefreshMs`, so a stream of forged ids
 * cannot turn the endpoint into a fetch amplifier; an id still unknown after that is
 * refused, never trusted.
 * @module
 */
import type { Clock } from '../clock.ts';
import { ConfigError } from '../errors.ts';
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
  /** The imported key for `id`, refreshing once if unknown; `undefined` when there is none. */
  get(id: string): Promise<CryptoKey | undefined>;
}

/** GitHub's endpoint for these keys. */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

function fromUrl(url: string): () => Promise<readonly GitHubPublicKey[]> {
  return async () => {
    const response = await fetch(url, { headers: { accept: 'application/json' } });
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

/** A cache over `source`. `fetch` failures reject (the handler answers 503). */
export function createPublicKeyCache(source: PublicKeySource, clock: Clock, minRefreshMs: number): PublicKeyCache {
  if (typeof source !== 'string' && typeof source?.fetch !== 'function') {
    throw new ConfigError('createLeakAlertHandler: publicKeys must be a URL or { fetch(): Promise<{ key_identifier, key }[]> }');
  }
  const load = typeof source === 'string' ? fromUrl(source) : () => source.fetch();
  let keys = new Map<string, CryptoKey>();
  let loaded = false;
  /** When an unknown id last caused a refresh. */
  let missRefreshAt = -Infinity;
  let loading: Promise<void> | undefined;

  const refresh = (): Promise<void> => {
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
        loaded = true;
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
      if (loading !== undefined) await loading;
      else if (!loaded) await refresh();
      else if (clock() - missRefreshAt >= minRefreshMs) {
        missRefreshAt = clock();
        await refresh();
      }
      return keys.get(id);
    },
  });
}
