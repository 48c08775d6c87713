/**
 * The keyring: issues, rotates, revokes, lists and verifies API keys over a `KeyStore`
 * (DESIGN §3). Verification is parse → checksum (no store access on failure) → digest →
 * bounded LRU cache of valid and invalid results → store. A cached entry is re-checked
 * against the clock on every hit, so a secret stops working at its `expiresAt` even
 * mid-TTL; `revoke`/`rotate`/`invalidate` evict an identity's entries at once.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { AuthenticationError, ConfigError, KeysetError, type InvalidKeyReason } from '../errors.ts';
import { randomBase62 } from '../internal/base62.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { fromHex, toByteString, toHex } from '../internal/hex.ts';
import { LruCache } from '../internal/lru-cache.ts';
import { readApiKeyHeader } from './authorization-header.ts';
import { createRawDigest } from './key-digest.ts';
import { KEY_MALFORMED, KEY_OK, assertKeyPrefix, checkKey, generateKey } from './key-format.ts';
import {
  toListQuery,
  validateIssueInput,
  validateOverlap,
  type IssueKeyInput,
  type KeyListPlan,
  type RotateKeyOptions,
} from './key-input.ts';
import { toKeyRecord, toVerifiedKey, type KeyRecord, type VerifiedKey } from './key-record.ts';
import type { KeyStore, StoredIdentity, StoredKey, StoredSecret } from './key-store.ts';
import { LastUsedWriter } from './last-used-writer.ts';
import { findQueryCredential } from './query-credentials.ts';
import { rotationEnds } from './rotation-ends.ts';
import { redactKey, safeLast4 } from './redact-key.ts';
import { missingScopes } from './scopes.ts';

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
  /** Key prefix, e.g. `acme_live` (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, at most 32 characters). */
  prefix: string;
  /** Server secret for HMAC-SHA256 digests (at least 16 bytes). Changing it invalidates every key. */
  pepper?: string | Uint8Array | undefined;
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
  /** @default systemClock */
  clock?: Clock;
  /** @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere) */
  crypto?: CryptoProvider;
  /** Receives rejections (reason, last 4, key id), store failures and flush failures. */
  logger?: KeyringLogger;
}

/** A new key and its record. `key` is shown once and never again: it is not stored. */
export interface IssuedKey {
  key: string;
  record: KeyRecord;
}

/** One page of `Keyring.list`. */
export interface KeyListResult {
  /**
   * Up to `plan.take` records, newest first: one more than `limit` when there is a next
   * page, exactly what `Paginator.page()` expects (it trims and builds the cursor).
   */
  records: KeyRecord[];
  /** Whether there are records after the first `limit`. */
  hasMore: boolean;
  /** All identities (offset mode only). */
  total?: number;
}

/** Emitted after a change that other instances' caches must hear about. */
export interface KeyChangeEvent {
  type: 'revoked' | 'rotated';
  /** Identity id. */
  id: string;
}

/** A listener; a returned promise is awaited before `revoke`/`rotate` resolve. */
export type KeyChangeListener = (event: KeyChangeEvent) => void | Promise<void>;

/** The request parts authentication looks at. */
export interface AuthenticateRequest {
  /** The `Authorization` header value. */
  authorization: string | null | undefined;
  /** The request URL (absolute, or path and query): checked for keys in the query string. */
  url?: string | URL | null | undefined;
}

/** Options of `Keyring.authenticate`. */
export interface AuthenticateOptions {
  /** Scopes the endpoint requires; all must be granted. */
  scopes?: readonly string[];
  /** Realm for this endpoint's 401 challenge. @default the keyring's `realm` */
  realm?: string;
}

/** The key manager. All methods reject with `KeysetError`s (`unavailable` when the store fails). */
export interface Keyring {
  /** The configured key prefix. */
  readonly prefix: string;
  issue(input: IssueKeyInput): Promise<IssuedKey>;
  /** The record of identity `id`; `not_found` when unknown. */
  get(id: string): Promise<KeyRecord>;
  list(plan: KeyListPlan): Promise<KeyListResult>;
  /**
   * Adds a new secret. The current one keeps verifying for `overlapSeconds` (never past its
   * own expiry); any older secret still inside an earlier overlap ends at once, so at most
   * two keys verify. `not_found` when unknown.
   */
  rotate(id: string, options: RotateKeyOptions): Promise<IssuedKey>;
  /** Ends every secret of `id` now. `not_found` when unknown; revoking twice is fine. */
  revoke(id: string): Promise<void>;
  /** The identity `key` belongs to, or an `AuthenticationError` (`invalid_api_key`). */
  verify(key: string): Promise<VerifiedKey>;
  /** Query-string check, `Authorization` header, verification and scopes, in that order. */
  authenticate(request: AuthenticateRequest, options?: AuthenticateOptions): Promise<VerifiedKey>;
  /** Drops cached results of identity `id` (called by a revocation bus on other instances). */
  invalidate(identityId: string): void;
  /** Subscribes to revocations and rotations; returns the unsubscribe function. */
  onChange(listener: KeyChangeListener): () => void;
  /** Writes pending last-use times and stops the timer. Does not close the store. */
  close(): Promise<void>;
}

interface ValidEntry {
  verified: VerifiedKey;
  /** Hex digest, for the last-use writer. */
  digest: string;
  identityId: string;
  /** Epoch ms at which the secret or identity stops being valid (Infinity: never). */
  validUntil: number;
  /** Why it stops: a scheduled revocation or an expiry. */
  endReason: 'expired' | 'revoked';
}

interface InvalidEntry {
  reason: 'unknown' | 'expired' | 'revoked';
  identityId: string | undefined;
}

const ID_PATTERN = /^key_[0-9A-Za-z]{22}$/;
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * `{ key, record }` whose `console.log`/`inspect` shows the key as `…abcd`. `JSON.stringify`
 * keeps the key on purpose: the issuing response is the one place it must appear.
 */
function issued(key: string, record: KeyRecord): IssuedKey {
  const result: IssuedKey = { key, record };
  Object.defineProperty(result, INSPECT, {
    value: (_depth: unknown, options: unknown, inspect?: (value: unknown, options: unknown) => string) => {
      const shown = { key: redactKey(key), record };
      return typeof inspect === 'function' ? `IssuedKey ${inspect(shown, options)}` : shown;
    },
  });
  return result;
}
const time = (d: Date | null): number => (d === null ? Infinity : d.getTime());

function positiveInteger(value: unknown, name: string, min = 1): number {
  if (!Number.isSafeInteger(value) || (value as number) < min) {
    throw new ConfigError(`${name} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value as number;
}

/** Whether `found` verifies at `now`, and until when. */
function judge(identity: StoredIdentity, secret: StoredSecret, now: number): { reason: 'expired' | 'revoked' } | { until: number; endReason: 'expired' | 'revoked' } {
  const revokedAt = time(identity.revokedAt);
  if (revokedAt <= now) return { reason: 'revoked' };
  const expires = Math.min(time(identity.expiresAt), time(secret.expiresAt));
  if (expires <= now) return { reason: 'expired' };
  return revokedAt < expires ? { until: revokedAt, endReason: 'revoked' } : { until: expires, endReason: 'expired' };
}

/**
 * Creates a keyring. Validates every option now and throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', logger });
 * const { key, record } = await keyring.issue({ name: 'billing service', scopes: ['orders:read'] });
 * const caller = await keyring.authenticate({ authorization: `ApiKey ${key}`, url: '/api/orders' }, { scopes: ['orders:read'] });
 * ```
 */
export function createKeyring(options: KeyringOptions): Keyring {
  const {
    store,
    prefix,
    pepper,
    cache = {},
    lastUsed = {},
    scopeWildcards = false,
    realm: defaultRealm = 'api',
    clock = systemClock,
    crypto = defaultCrypto,
    logger,
  } = options;
  assertKeyPrefix(prefix);
  for (const method of ['insertIdentity', 'addSecret', 'findByDigest', 'getIdentity', 'listIdentities', 'revoke', 'touchLastUsed'] as const) {
    if (typeof store?.[method] !== 'function') throw new ConfigError(`store must implement KeyStore: ${method}() is missing`);
  }
  if (typeof clock !== 'function') throw new ConfigError('clock must be a function returning epoch milliseconds');
  const rawDigest = createRawDigest(pepper === undefined ? { crypto } : { crypto, pepper });

  let valid: LruCache<ValidEntry> | undefined;
  let invalidCache: LruCache<InvalidEntry> | undefined;
  let ttlMs = 0;
  let negativeTtlMs = 0;
  if (cache !== false) {
    const max = positiveInteger(cache.max ?? 10_000, 'cache.max', 0);
    ttlMs = positiveInteger(cache.ttlMs ?? 30_000, 'cache.ttlMs', 0);
    negativeTtlMs = positiveInteger(cache.negativeTtlMs ?? 5_000, 'cache.negativeTtlMs', 0);
    const negativeMax = positiveInteger(cache.negativeMax ?? max, 'cache.negativeMax', 0);
    if (max > 0 && ttlMs > 0) valid = new LruCache(max);
    if (negativeMax > 0 && negativeTtlMs > 0) invalidCache = new LruCache(negativeMax);
  }

  const writer =
    lastUsed === false
      ? undefined
      : new LastUsedWriter(store, positiveInteger(lastUsed.intervalMs ?? 60_000, 'lastUsed.intervalMs'), (error, count) => {
          logError({ err: error, count }, 'api key lastUsedAt write failed; retrying next interval');
        });

  // A logger that throws (a closed sink, a failing serializer) must never turn a client's
  // 401 into a 500 or crash the process from the last-use timer: logging is best effort.
  const warn = (fields: Record<string, unknown>, message: string): void => {
    try {
      logger?.warn?.(fields, message);
    } catch {
      /* best effort */
    }
  };
  const logError = (fields: Record<string, unknown>, message: string): void => {
    try {
      logger?.error?.(fields, message);
    } catch {
      /* best effort */
    }
  };

  const listeners = new Set<KeyChangeListener>();
  /** Bumped on every eviction: a store answer that raced with one is not cached. */
  let epoch = 0;

  async function storeCall<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      logError({ err: error, operation }, 'key store unavailable');
      throw new KeysetError('unavailable', { detail: 'The key store is unavailable; try again shortly.', cause: error });
    }
  }

  function reject(reason: InvalidKeyReason, last4: string | undefined, keyId: string | undefined, realm: string): AuthenticationError {
    if (logger?.warn) {
      const fields: Record<string, unknown> = { reason };
      if (last4 !== undefined) fields.last4 = last4;
      if (keyId !== undefined) fields.keyId = keyId;
      warn(fields, 'api key rejected');
    }
    return new AuthenticationError('invalid_api_key', last4 === undefined ? { reason, realm } : { reason, realm, last4 });
  }

  function notFound(): KeysetError {
    return new KeysetError('not_found', { detail: 'No API key with this id.' });
  }

  async function digestHex(key: string): Promise<string> {
    return toHex(await rawDigest(key));
  }

  async function verifyText(text: string, realm: string): Promise<VerifiedKey> {
    const check = checkKey(text, prefix);
    if (check !== KEY_OK) {
      throw reject(check === KEY_MALFORMED ? 'malformed' : 'checksum', typeof text === 'string' ? safeLast4(text) : undefined, undefined, realm);
    }
    const raw = rawDigest(text);
    const bytes = raw instanceof Uint8Array ? raw : await raw;
    // Cache keys are the digest's bytes as a short flat string: cheaper to hash than hex.
    const cacheKey = toByteString(bytes);
    const now = clock();

    const hit = valid?.get(cacheKey, now);
    if (hit !== undefined) {
      if (now < hit.validUntil) {
        writer?.touch(hit.digest, now);
        return hit.verified;
      }
      valid!.delete(cacheKey);
      invalidCache?.set(cacheKey, { reason: hit.endReason, identityId: hit.identityId }, now + negativeTtlMs);
      throw reject(hit.endReason, text.slice(-4), hit.identityId, realm);
    }
    const last4 = text.slice(-4);
    const miss = invalidCache?.get(cacheKey, now);
    if (miss !== undefined) throw reject(miss.reason, last4, miss.identityId, realm);

    const digest = toHex(bytes);
    const startEpoch = epoch;
    const found = await storeCall('findByDigest', () => store.findByDigest(digest));
    const storedDigest = found === undefined ? undefined : fromHex(found.secret.digest);
    // The store matched by digest; compare again in constant time so a store that matches
    // loosely (collation, prefix index) can never let a different key through.
    if (found === undefined || storedDigest === undefined || !crypto.timingSafeEqual(storedDigest, bytes)) {
      if (epoch === startEpoch) invalidCache?.set(cacheKey, { reason: 'unknown', identityId: undefined }, now + negativeTtlMs);
      throw reject('unknown', last4, undefined, realm);
    }
    const { identity } = found;
    const verdict = judge(identity, found.secret, now);
    if ('reason' in verdict) {
      if (epoch === startEpoch) invalidCache?.set(cacheKey, { reason: verdict.reason, identityId: identity.id }, now + negativeTtlMs);
      throw reject(verdict.reason, last4, identity.id, realm);
    }
    const verified = toVerifiedKey(found, last4);
    if (epoch === startEpoch) {
      valid?.set(cacheKey, { verified, digest, identityId: identity.id, validUntil: verdict.until, endReason: verdict.endReason }, now + ttlMs);
    }
    writer?.touch(digest, now);
    return verified;
  }

  function evict(identityId: string): void {
    epoch++;
    valid?.deleteWhere((entry) => entry.identityId === identityId);
    invalidCache?.deleteWhere((entry) => entry.identityId === identityId);
  }

  async function emit(event: KeyChangeEvent): Promise<void> {
    const results = await Promise.allSettled(
      [...listeners].map(async (listener) => {
        await listener(event);
      }),
    );
    for (const result of results) {
      if (result.status === 'rejected') {
        logError({ err: result.reason, event: event.type, keyId: event.id }, 'api key change listener failed');
      }
    }
  }

  async function newSecret(now: number): Promise<{ key: string; secret: StoredSecret }> {
    const key = generateKey(prefix, { crypto });
    const secret: StoredSecret = { digest: await digestHex(key), last4: key.slice(-4), createdAt: new Date(now), lastUsedAt: null, expiresAt: null };
    return { key, secret };
  }

  const pendingUse = (digest: string): number | undefined => writer?.pending(digest);

  const keyring: Keyring = {
    prefix,

    async issue(input: IssueKeyInput): Promise<IssuedKey> {
      const now = clock();
      const fields = validateIssueInput(input, now);
      const { key, secret } = await newSecret(now);
      const identity: StoredIdentity = {
        id: `key_${randomBase62((n) => crypto.randomBytes(n), 22)}`,
        ...fields,
        createdAt: new Date(now),
        revokedAt: null,
      };
      await storeCall('insertIdentity', () => store.insertIdentity(identity, secret));
      const bytes = fromHex(secret.digest);
      if (bytes !== undefined) invalidCache?.delete(toByteString(bytes));
      return issued(key, toKeyRecord({ identity, secrets: [secret] }));
    },

    async get(id: string): Promise<KeyRecord> {
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const stored = await storeCall('getIdentity', () => store.getIdentity(id));
      if (stored === undefined) throw notFound();
      return toKeyRecord(stored, pendingUse);
    },

    async list(plan: KeyListPlan): Promise<KeyListResult> {
      const { query, limit } = toListQuery(plan);
      const { keys, total } = await storeCall('listIdentities', () => store.listIdentities(query));
      const records = keys.slice(0, query.take).map((k) => toKeyRecord(k, pendingUse));
      return total === undefined ? { records, hasMore: keys.length > limit } : { records, hasMore: keys.length > limit, total };
    },

    async rotate(id: string, rotateOptions: RotateKeyOptions): Promise<IssuedKey> {
      const overlapMs = validateOverlap(rotateOptions);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const now = clock();
      const current = await storeCall('getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      if (current.identity.revokedAt !== null) {
        throw new KeysetError('invalid_request', { detail: 'A revoked key cannot be rotated; issue a new one.', extensions: { field: 'id' } });
      }
      if (time(current.identity.expiresAt) <= now) {
        throw new KeysetError('invalid_request', { detail: 'An expired key cannot be rotated; issue a new one.', extensions: { field: 'id' } });
      }
      const { key, secret } = await newSecret(now);
      const endOthers = new Date(now + overlapMs);
      const added = await storeCall('addSecret', () => store.addSecret(id, secret, endOthers));
      if (!added) throw notFound();
      // Cached entries of the old secrets still carry their old expiry: drop every entry of
      // the identity now, the current secret (new overlap end) and any older one (ended now).
      evict(id);
      await emit({ type: 'rotated', id });
      // The store applied the same rule (KeyStore.addSecret) to what it holds.
      const ends = rotationEnds(current.secrets, now, endOthers.getTime());
      const rotated: StoredKey = {
        identity: current.identity,
        secrets: [secret, ...current.secrets.map((s, n) => ({ ...s, expiresAt: ends[n] ?? null }))],
      };
      return issued(key, toKeyRecord(rotated, pendingUse));
    },

    async revoke(id: string): Promise<void> {
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const revoked = await storeCall('revoke', () => store.revoke(id, new Date(clock())));
      if (!revoked) throw notFound();
      evict(id);
      await emit({ type: 'revoked', id });
    },

    verify(key: string): Promise<VerifiedKey> {
      return verifyText(key, defaultRealm);
    },

    async authenticate(request: AuthenticateRequest, authOptions: AuthenticateOptions = {}): Promise<VerifiedKey> {
      const { scopes, realm = defaultRealm } = authOptions;
      const url = request.url;
      if (url !== undefined && url !== null) {
        const found = findQueryCredential(String(url), prefix);
        if (found !== undefined) {
          if (logger?.warn) warn({ reason: 'api_key_in_query', ...(found.kind === 'named' ? { param: found.name } : {}) }, 'api key rejected');
          throw new KeysetError('api_key_in_query', {
            detail:
              found.kind === 'named'
                ? `Send the API key in the Authorization header (\`Authorization: ApiKey <key>\`), never in the URL: remove the \`${found.name}\` query parameter, and rotate the key, since URLs are logged.`
                : 'A query parameter holds an API key. Send it in the Authorization header (`Authorization: ApiKey <key>`), never in the URL, and rotate the key, since URLs are logged.',
          });
        }
      }
      const header = readApiKeyHeader(request.authorization);
      if (header.kind === 'missing') throw new AuthenticationError('missing_api_key', { realm });
      const key = await verifyText(header.text, realm);
      if (scopes !== undefined && scopes.length > 0) {
        const missing = missingScopes(key.scopes, scopes, { wildcards: scopeWildcards });
        if (missing.length > 0) {
          if (logger?.warn) warn({ reason: 'insufficient_scope', last4: key.last4, keyId: key.id, missingScopes: missing }, 'api key lacks scope');
          throw new KeysetError('insufficient_scope', {
            detail: `This API key lacks the required scope${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`,
            extensions: { missing_scopes: missing },
          });
        }
      }
      return key;
    },

    invalidate(identityId: string): void {
      evict(identityId);
    },

    onChange(listener: KeyChangeListener): () => void {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async close(): Promise<void> {
      const result = await writer?.close();
      if (result !== undefined && !result.ok) {
        throw new KeysetError('unavailable', { detail: 'Pending lastUsedAt times could not be written.', cause: result.error });
      }
    },
  };
  return Object.freeze(keyring);
}
