/**
 * What `createKeyring` takes, and its validation. Every option is checked when the
 * factory runs, in a fixed order, and a bad one throws a `ConfigError` that says what to
 * change; the keyring's parts then receive only resolved values.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { ConfigError } from '../errors.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { API_KEY_ONLY, resolveSchemes, type AcceptedSchemes, type KeyScheme } from './authorization-header.ts';
import type { RawDigest } from '../keys/key-digest.ts';
import { resolveEnvironments, type KeyEnvironments } from '../keys/key-environments.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { createPepperRing, type Pepper, type PepperRing } from '../keys/pepper-ring.ts';

/** pino-compatible: `(fields, message)`. Only ever receives ids, reasons and last-4s. */
export interface KeyringLogger {
  warn?(fields: Record<string, unknown>, message: string): void;
  error?(fields: Record<string, unknown>, message: string): void;
}

/** Verification cache. Entries are keyed by digest, never by key text. */
export interface KeyringCacheOptions {
  /**
   * Valid keys held at most.
   * @default 10_000
   */
  max?: number;
  /**
   * How long a valid result is trusted without asking the store. Bounds how late a
   * revocation made elsewhere without a revocation bus takes effect here.
   * @default 30_000
   */
  ttlMs?: number;
  /**
   * How long an invalid result (unknown, expired, revoked) is remembered.
   * @default 5_000
   */
  negativeTtlMs?: number;
  /**
   * Invalid results held at most; a separate bound, so a flood of unknown keys can never
   * push valid keys out.
   * @default max
   */
  negativeMax?: number;
}

/** Options of `createKeyring`. */
export interface KeyringOptions {
  /** Where identities and digests live: `createMemoryKeyStore()`, `@keyset/postgres`, … */
  store: KeyStore;
  /**
   * Key prefix, e.g. `acme_live` (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, at most 32 characters);
   * its keys' `environment` is the prefix itself. Or several environments, each with its
   * prefix: `{ live: 'acme_live', test: 'acme_test' }` accepts keys of both, names each
   * verified key's `environment`, and issues keys of the first unless `issue` says otherwise.
   */
  prefix: string | Readonly<Record<string, string>>;
  /**
   * Server secret for HMAC-SHA256 digests (at least 16 bytes). Replacing it invalidates
   * every key: to rotate it, use `peppers`. The same as `peppers: [pepper]`.
   */
  pepper?: string | Uint8Array | undefined;
  /**
   * Peppers, newest first (`pepper` or this, not both). Keys are issued under the first;
   * a key stored under an older one still verifies and is re-hashed under the first once,
   * in the background. `null` stands for plain SHA-256 (digests made with no pepper). Drop
   * an old pepper once `createKeyAdmin(keyring).pepperCounts()` shows none of its digests
   * left. More than one needs a store with `findByDigests` and `rehashDigests`.
   */
  peppers?: readonly Pepper[] | undefined;
  /** Verification cache; `false` asks the store on every request. */
  cache?: KeyringCacheOptions | false;
  /** Coalesced last-use writes; `false` records no use. */
  lastUsed?:
    | {
        /**
         * Milliseconds between batched writes: each key is written at most once per interval.
         * @default 60_000
         */
        intervalMs?: number;
      }
    | false;
  /**
   * Let a granted `orders:*` cover `orders:read` (and `*` cover everything).
   * @default false
   */
  scopeWildcards?: boolean;
  /**
   * Realm of the `WWW-Authenticate: ApiKey realm="…"` challenge on 401s.
   * @default 'api'
   */
  realm?: string;
  /**
   * Where requests may carry their key: `'ApiKey'` (`Authorization: ApiKey <key>`),
   * `'Bearer'` (`Authorization: Bearer <key>`, as OAuth-style clients, gateways and
   * generated SDKs send it) and `'X-API-Key'` (an `X-API-Key: <key>` header). A form not
   * listed gets 401 `unsupported_auth_scheme` saying where the key goes; 401s carry one
   * `WWW-Authenticate` challenge per listed scheme. Keys in the query string are refused
   * whatever this says, and a request with keys in two places (two `Authorization`
   * values, or `Authorization` and `X-API-Key` when both are read) is a 400.
   * @default ['ApiKey']
   */
  schemes?: readonly KeyScheme[];
  /** @default systemClock */
  clock?: Clock;
  /** @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere) */
  crypto?: CryptoProvider;
  /** Receives rejections (reason, last 4, key id), store failures and flush failures. */
  logger?: KeyringLogger;
  /**
   * Called once for each well-formed key the keyring looks up, with where the answer came
   * from: `hit` (a valid key from the cache), `negative_hit` (a refused key from the cache),
   * `miss` (the store was asked). For metrics such as a cache hit ratio; it runs
   * synchronously on the request's path, so it should only count. A key refused before any
   * lookup (malformed, bad checksum) is not a lookup.
   * @default none
   */
  onCacheLookup?: (result: KeyCacheResult) => void;
}

/** Where a key lookup was answered from, as `onCacheLookup` receives it. */
export type KeyCacheResult = 'hit' | 'negative_hit' | 'miss';

/** Every name `KeyringOptions` knows, checked when the keyring is made. */
const KEYRING_OPTIONS = {
  store: true,
  prefix: true,
  pepper: true,
  peppers: true,
  cache: { max: true, ttlMs: true, negativeTtlMs: true, negativeMax: true },
  lastUsed: { intervalMs: true },
  scopeWildcards: true,
  realm: true,
  schemes: true,
  clock: true,
  crypto: true,
  logger: true,
  onCacheLookup: true,
} as const satisfies KnownOptions<KeyringOptions>;

/** `KeyringOptions` after validation and defaults. Internal: not exported from the package. */
export interface ResolvedKeyringOptions {
  readonly store: KeyStore;
  /** The default prefix (the first environment's). */
  readonly prefix: string;
  readonly environments: KeyEnvironments;
  /** The digest function, bound to the newest pepper. */
  readonly rawDigest: RawDigest;
  /** Every pepper's digest function and id, newest first. */
  readonly peppers: PepperRing;
  /** Cache bounds; a zero size or TTL turns that cache off (all zero for `cache: false`). */
  readonly cache: Readonly<Required<KeyringCacheOptions>>;
  /** Milliseconds between last-use writes; `undefined` records no use. */
  readonly lastUsedIntervalMs: number | undefined;
  readonly scopeWildcards: boolean;
  readonly realm: string;
  readonly schemes: AcceptedSchemes;
  readonly clock: Clock;
  readonly crypto: CryptoProvider;
  readonly logger: KeyringLogger | undefined;
  readonly onCacheLookup: ((result: KeyCacheResult) => void) | undefined;
}

const STORE_METHODS = ['insertIdentity', 'addSecret', 'findByDigest', 'getIdentity', 'listIdentities', 'revoke', 'touchLastUsed'] as const;
const NO_CACHE: Readonly<Required<KeyringCacheOptions>> = Object.freeze({ max: 0, ttlMs: 0, negativeTtlMs: 0, negativeMax: 0 });

function positiveInteger(value: unknown, name: string, min = 1): number {
  if (!Number.isSafeInteger(value) || (value as number) < min) {
    throw new ConfigError(`${name} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value as number;
}

/** Validates `options` (never mutating them) and applies the defaults. Throws `ConfigError`. */
export function resolveKeyringOptions(options: KeyringOptions): ResolvedKeyringOptions {
  assertKnownOptions('createKeyring', options, KEYRING_OPTIONS);
  const {
    store,
    prefix,
    pepper,
    peppers,
    cache = {},
    lastUsed = {},
    scopeWildcards = false,
    realm = 'api',
    schemes,
    clock = systemClock,
    crypto = defaultCrypto,
    logger,
    onCacheLookup,
  } = options;
  const environments = resolveEnvironments(prefix);
  const accepted = schemes === undefined ? API_KEY_ONLY : resolveSchemes(schemes);
  for (const method of STORE_METHODS) {
    if (typeof store?.[method] !== 'function') throw new ConfigError(`store must implement KeyStore: ${method}() is missing`);
  }
  if (typeof clock !== 'function') throw new ConfigError('clock must be a function returning epoch milliseconds');
  if (onCacheLookup !== undefined && typeof onCacheLookup !== 'function') throw new ConfigError('onCacheLookup must be a function (result) => void');
  if (pepper !== undefined && peppers !== undefined) {
    throw new ConfigError('pepper and peppers were both given: use peppers alone, newest first ([pepper] is the same as pepper)');
  }
  // `pepper` alone, or none, is a ring of one: the verify path is the same as before rotation existed.
  const ring = createPepperRing(peppers ?? [pepper ?? null], crypto, peppers !== undefined);
  if (ring.digests.length > 1) {
    for (const method of ['findByDigests', 'rehashDigests'] as const) {
      if (typeof store[method] !== 'function') throw new ConfigError(`peppers: a keyring with more than one pepper needs a store with ${method}() (one lookup per request, lazy re-hash)`);
    }
  }
  const rawDigest = ring.digests[0];

  let resolvedCache = NO_CACHE;
  if (cache !== false) {
    const max = positiveInteger(cache.max ?? 10_000, 'cache.max', 0);
    const ttlMs = positiveInteger(cache.ttlMs ?? 30_000, 'cache.ttlMs', 0);
    const negativeTtlMs = positiveInteger(cache.negativeTtlMs ?? 5_000, 'cache.negativeTtlMs', 0);
    const negativeMax = positiveInteger(cache.negativeMax ?? max, 'cache.negativeMax', 0);
    resolvedCache = Object.freeze({ max, ttlMs, negativeTtlMs, negativeMax });
  }
  const lastUsedIntervalMs = lastUsed === false ? undefined : positiveInteger(lastUsed.intervalMs ?? 60_000, 'lastUsed.intervalMs');

  return { store, prefix: environments.defaultPrefix, environments, rawDigest, peppers: ring, cache: resolvedCache, lastUsedIntervalMs, scopeWildcards, realm, schemes: accepted, clock, crypto, logger, onCacheLookup };
}
