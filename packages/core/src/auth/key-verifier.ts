/**
 * The verification path: parse → checksum (no store access on failure) →
 * digest → bounded cache of valid and invalid results → store. A cached entry is
 * re-checked against the clock on every hit, so a secret stops working at its
 * `expiresAt` even mid-TTL; `evict` drops an identity's entries at once.
 *
 * With a synchronous digest (node:crypto) the cache of valid results is asked before the
 * checksum: an entry there was stored for a text that passed the checksum, and the digest
 * (SHA-256) names that one text, so on a hit the checksum could only pass again. Only the
 * length, which names the prefix, is checked first (it bounds what is hashed). A text
 * that misses is checksummed before the negative cache and the store, so a bad checksum
 * still never reaches the store, and is refused with the same error and log as before.
 *
 * Both caches are `DigestCache`s (at the end of this module): looked up by a small integer
 * taken from the digest, never answering for another digest.
 * @module
 */
import { AuthenticationError, type InvalidKeyReason } from '../errors.ts';
import { fromByteString, fromHex, toByteString, toHex } from '../internal/hex.ts';
import { LruCache, type LruSlot } from '../internal/lru-cache.ts';
import type { BestEffortLog } from '../keys/internal/best-effort-log.ts';
import { judge } from '../keys/internal/key-validity.ts';
import { storeCall } from '../keys/internal/store-call.ts';
import { KEY_MALFORMED, KEY_OK, checkKey } from '../keys/key-format.ts';
import { createScopeLists, toVerifiedKey, toVerifiedOwner, type VerifiedKey, type VerifiedOwner } from '../keys/key-record.ts';
import type { FoundKey } from '../keys/key-store.ts';
import type { ResolvedKeyringOptions } from './keyring-options.ts';
import type { LastUse, LastUsedWriter } from './last-used-writer.ts';
import type { PepperRehasher } from './pepper-rehasher.ts';
import { safeLast4 } from '../redaction/redact-key.ts';

/** What the verifier needs from the keyring. */
export interface KeyVerifierOptions extends Pick<ResolvedKeyringOptions, 'store' | 'environments' | 'rawDigest' | 'peppers' | 'cache' | 'clock' | 'crypto' | 'schemes' | 'onCacheLookup'> {
  readonly log: BestEffortLog;
  /** Receives every successful use; `undefined` records none. */
  readonly writer: LastUsedWriter | undefined;
  /** With more than one pepper: re-hashes keys found under an older one. `undefined`: one pepper. */
  readonly rehasher: PepperRehasher | undefined;
}

/** Internal: not exported from the package. */
export interface KeyVerifier {
  /**
   * The identity `text` belongs to, or an `AuthenticationError` with `realm`. Answers
   * synchronously (a value, or a synchronous throw) when the digest and the caches do:
   * a promise only when the store must be asked or the digest is asynchronous.
   */
  verify(text: string, realm: string): VerifiedKey | Promise<VerifiedKey>;
  /**
   * Drops every cached result of identity `identityId`, of every key of the owner named
   * `owner:<ownerId>`, or of every key holding the role named `role:<name>`.
   */
  evict(identityId: string): void;
  /** Drops every cached result (valid and rejected). */
  evictAll(): void;
  /** Drops a cached rejection of the key with hex digest `digest` (it was just issued). */
  forgetRejection(digest: string): void;
}

/**
 * A cached valid result: one object that is also the cache's slot and, with a last-use
 * writer, the record of the digest's last use, so a hit reads one object.
 */
interface ValidEntry extends DigestSlot, LastUse {
  verified: VerifiedKey;
  /** Whether uses are recorded on this entry (a last-use writer is configured). */
  tracked: boolean;
  identityId: string;
  ownerId: string | null;
  /** The roles the key was verified with (its own and its owner's): changing one evicts this. */
  roles: readonly string[];
  /** Epoch ms at which the secret or identity stops being valid (Infinity: never). */
  validUntil: number;
  /** Why it stops: a scheduled revocation or an expiry. */
  endReason: 'expired' | 'revoked';
}

interface InvalidEntry extends DigestSlot {
  reason: 'unknown' | 'expired' | 'revoked';
  identityId: string | undefined;
  /** Set when the key was refused for its owner (deleted or disabled): re-enabling it evicts this. */
  ownerId: string | null;
}

/** A negative cache entry (the cache sets `digestKey` and `until`). */
const invalidEntry = (reason: InvalidEntry['reason'], identityId: string | undefined, ownerId: string | null = null): InvalidEntry => ({
  reason,
  identityId,
  ownerId,
  digestKey: '',
  until: 0,
  hit: 0,
});

/**
 * What `evict` takes to drop every key of an owner: `owner:<ownerId>`. Key ids never hold
 * a colon, so the two cannot be confused, and every revocation bus carries it unchanged.
 */
export const OWNER_EVICTION_PREFIX = 'owner:';

/**
 * What `evict` takes to drop every key that holds a role, itself or through its owner:
 * `role:<name>`. Neither key ids nor `owner:` ids can be mistaken for it.
 */
export const ROLE_EVICTION_PREFIX = 'role:';

/**
 * The key's own scopes and the permissions of the roles it holds, in one list without
 * repeats (the key's own first), and the names of those roles.
 */
function grantsOf(scopes: readonly string[], roles: FoundKey['roles']): { scopes: readonly string[]; roles: readonly string[] } {
  if (roles === undefined || roles.length === 0) return { scopes, roles: [] };
  const all = new Set(scopes);
  const names = new Set<string>();
  for (const role of roles) {
    names.add(role.name);
    for (const permission of role.permissions) all.add(permission);
  }
  return { scopes: [...all], roles: [...names] };
}

/** Creates the verifier and its two caches. */
export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const { store, environments, rawDigest, peppers, clock, crypto, log, writer, rehasher, onCacheLookup } = options;
  // One challenge per accepted scheme on every 401.
  const schemes = options.schemes.list;
  const binaryDigest = rawDigest.binary;
  const { max, ttlMs, negativeTtlMs, negativeMax } = options.cache;
  const valid = max > 0 && ttlMs > 0 ? new DigestCache<ValidEntry>(max, () => randomSalt(crypto)) : undefined;
  const invalidCache = negativeMax > 0 && negativeTtlMs > 0 ? new DigestCache<InvalidEntry>(negativeMax, () => randomSalt(crypto)) : undefined;
  // One frozen scope list per distinct list among this verifier's keys.
  const scopeLists = createScopeLists();
  /** Bumped on every eviction: a store answer that raced with one is not cached. */
  let epoch = 0;

  function reject(reason: InvalidKeyReason, last4: string | undefined, keyId: string | undefined, realm: string): AuthenticationError {
    if (log.warns()) {
      const fields: Record<string, unknown> = { reason };
      if (last4 !== undefined) fields.last4 = last4;
      if (keyId !== undefined) fields.keyId = keyId;
      log.warn(fields, 'api key rejected');
    }
    return new AuthenticationError('invalid_api_key', last4 === undefined ? { reason, realm, schemes } : { reason, realm, schemes, last4 });
  }

  function verify(text: string, realm: string): VerifiedKey | Promise<VerifiedKey> {
    // The key's length names the one configured prefix it could have (key-environments.ts).
    const prefix = environments.prefixOfKey(text);
    if (prefix === undefined) throw reject('malformed', typeof text === 'string' ? safeLast4(text) : undefined, undefined, realm);
    // Cache keys are the digest's bytes as a short flat string: cheaper to hash than hex.
    // A provider that gives that string directly saves the byte array on every hit, and
    // lets a hit skip the checksum (see the module comment).
    if (binaryDigest !== undefined) return fromDigest(text, prefix, binaryDigest(text), undefined, realm, false);
    refuseBadKey(text, prefix, realm);
    const raw = rawDigest(text);
    return raw instanceof Uint8Array
      ? fromDigest(text, prefix, toByteString(raw), raw, realm, true)
      : raw.then((bytes) => fromDigest(text, prefix, toByteString(bytes), bytes, realm, true));
  }

  /** Throws the 401 for a text that is not a key of `prefix` (syntax or checksum). */
  function refuseBadKey(text: string, prefix: string, realm: string): void {
    const check = checkKey(text, prefix);
    if (check !== KEY_OK) throw reject(check === KEY_MALFORMED ? 'malformed' : 'checksum', safeLast4(text), undefined, realm);
  }

  /**
   * The caches, synchronously; the store (a promise) only on a miss of both. `bytes`: the
   * digest, when already at hand; `checked`: whether `text` passed `checkKey` already.
   */
  function fromDigest(text: string, prefix: string, cacheKey: string, bytes: Uint8Array | undefined, realm: string, checked: boolean): VerifiedKey | Promise<VerifiedKey> {
    const now = clock();

    const hit = valid?.get(cacheKey, now);
    if (hit !== undefined) {
      onCacheLookup?.(now < hit.validUntil ? 'hit' : 'negative_hit');
      if (now < hit.validUntil) {
        if (hit.tracked) writer!.use(hit, now);
        return hit.verified;
      }
      valid!.delete(cacheKey);
      invalidCache?.set(cacheKey, invalidEntry(hit.endReason, hit.identityId, hit.ownerId), now + negativeTtlMs, now);
      throw reject(hit.endReason, text.slice(-4), hit.identityId, realm);
    }
    if (!checked) refuseBadKey(text, prefix, realm);
    const last4 = text.slice(-4);
    const miss = invalidCache?.get(cacheKey, now);
    onCacheLookup?.(miss === undefined ? 'miss' : 'negative_hit');
    if (miss !== undefined) throw reject(miss.reason, last4, miss.identityId, realm);
    return fromStore(bytes ?? fromByteString(cacheKey), cacheKey, now, text, realm);
  }

  async function fromStore(bytes: Uint8Array, cacheKey: string, now: number, text: string, realm: string): Promise<VerifiedKey> {
    const last4 = text.slice(-4);
    const digest = toHex(bytes);
    const startEpoch = epoch;
    // One pepper: its digest, one lookup. Several (a rotation): every pepper's digest of the
    // text, still in ONE lookup, so an unknown key costs no more store work than before.
    const candidates = rehasher === undefined ? undefined : await pepperDigests(text, bytes);
    const found = await storeCall(log, 'findByDigest', () =>
      candidates === undefined ? store.findByDigest(digest) : store.findByDigests!(candidates.map(toHex)),
    );
    const storedDigest = found === undefined ? undefined : fromHex(found.secret.digest);
    // The store matched by digest; compare again in constant time so a store that matches
    // loosely (collation, prefix index) can never let a different key through.
    const pepper = storedDigest === undefined ? -1 : candidates === undefined ? (crypto.timingSafeEqual(storedDigest, bytes) ? 0 : -1) : matchingPepper(storedDigest, candidates);
    if (found === undefined || pepper === -1) {
      if (epoch === startEpoch) invalidCache?.set(cacheKey, invalidEntry('unknown', undefined), now + negativeTtlMs, now);
      throw reject('unknown', last4, undefined, realm);
    }
    const { identity } = found;
    const verdict = judge(identity, found.secret, now);
    if ('reason' in verdict) {
      if (epoch === startEpoch) invalidCache?.set(cacheKey, invalidEntry(verdict.reason, identity.id), now + negativeTtlMs, now);
      throw reject(verdict.reason, last4, identity.id, realm);
    }
    // A key whose owner was deleted or is disabled is refused like a revoked one; a store
    // that keeps no owners (no `owner` member) leaves the owner out.
    const ownerId = identity.ownerId ?? null;
    let owner: VerifiedOwner | null = null;
    if (ownerId !== null && 'owner' in found) {
      const stored = found.owner ?? null;
      if (stored === null || stored.disabledAt !== null) {
        if (epoch === startEpoch) invalidCache?.set(cacheKey, invalidEntry('revoked', identity.id, ownerId), now + negativeTtlMs, now);
        if (log.warns()) log.warn({ reason: 'revoked', last4, keyId: identity.id, owner: stored === null ? 'deleted' : 'disabled' }, 'api key rejected');
        throw new AuthenticationError('invalid_api_key', { reason: 'revoked', realm, schemes, last4 });
      }
      owner = toVerifiedOwner(stored);
    }
    // Made under an older pepper, or before pepper ids were stored: re-hash it under the
    // newest once, in the background. The cache entry and last-use writes use the new digest.
    if (rehasher !== undefined) {
      const [newest = ''] = await peppers.ids();
      if (pepper > 0 || found.secret.pepperId !== newest) rehasher.queue({ from: found.secret.digest, to: digest, pepperId: newest });
    }
    // The digest matched the whole text, prefix included: this is the key's environment.
    // Its scopes are its own and its roles' permissions (its owner's roles included).
    const granted = grantsOf(identity.scopes, found.roles);
    const withGrants = granted.scopes === identity.scopes ? found : { identity: { ...identity, scopes: granted.scopes as string[] } };
    const verified = toVerifiedKey(withGrants, environments.environmentOf(environments.prefixOfKey(text) ?? null), last4, scopeLists, owner);
    const entry: ValidEntry = {
      verified,
      tracked: writer !== undefined,
      identityId: identity.id,
      ownerId,
      roles: granted.roles,
      validUntil: verdict.until,
      endReason: verdict.endReason,
      digest,
      at: now,
      queued: 0,
      batch: 0,
      digestKey: '',
      until: 0,
      hit: 0,
    };
    writer?.track(entry);
    if (epoch === startEpoch) valid?.set(cacheKey, entry, now + ttlMs, now);
    return verified;
  }

  /** Every pepper's digest of `text`, newest (`newest`, already made) first. */
  async function pepperDigests(text: string, newest: Uint8Array): Promise<Uint8Array[]> {
    const older = peppers.digests.slice(1).map((digestOf) => digestOf(text));
    return [newest, ...(await Promise.all(older))];
  }

  /** Index of the candidate equal to `stored` (each compared in constant time), or -1. */
  function matchingPepper(stored: Uint8Array, candidates: readonly Uint8Array[]): number {
    let match = -1;
    candidates.forEach((candidate, n) => {
      if (match === -1 && stored.length === candidate.length && crypto.timingSafeEqual(stored, candidate)) match = n;
    });
    return match;
  }

  function evict(identityId: string): void {
    epoch++;
    if (identityId.startsWith(ROLE_EVICTION_PREFIX)) {
      const role = identityId.slice(ROLE_EVICTION_PREFIX.length);
      valid?.deleteWhere((entry) => entry.roles.includes(role));
      return;
    }
    if (identityId.startsWith(OWNER_EVICTION_PREFIX)) {
      const ownerId = identityId.slice(OWNER_EVICTION_PREFIX.length);
      valid?.deleteWhere((entry) => entry.ownerId === ownerId);
      invalidCache?.deleteWhere((entry) => entry.ownerId === ownerId);
      return;
    }
    valid?.deleteWhere((entry) => entry.identityId === identityId);
    invalidCache?.deleteWhere((entry) => entry.identityId === identityId);
  }

  function evictAll(): void {
    epoch++;
    valid?.clear();
    invalidCache?.clear();
  }

  function forgetRejection(digest: string): void {
    const bytes = fromHex(digest);
    if (bytes !== undefined) invalidCache?.delete(toByteString(bytes));
  }

  return Object.freeze({ verify, evict, evictAll, forgetRejection });
}

/** 32 random bits for a `DigestCache`'s salt. */
function randomSalt(crypto: KeyVerifierOptions['crypto']): number {
  const [a = 0, b = 0, c = 0, d = 0] = crypto.randomBytes(4);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** The fields a `DigestCache` keeps on each value (set by `set`). */
export interface DigestSlot extends LruSlot {
  /** The full binary digest the entry was stored under. */
  digestKey: string;
}

/**
 * Bounded cache with TTL, by binary digest: the verifier's two caches. Internal.
 *
 * Keyed by a key's digest (a 32-character binary string, see
 * `internal/hex.ts`) but looked up by a 30-bit integer taken from it: a `Map` finds a
 * small-integer key without hashing a fresh 32-character string and without reading the
 * stored key's characters to compare them, which was half of what a lookup by the string
 * cost. Each entry keeps its full digest, and a lookup answers only when that digest
 * equals the one asked for, so an entry is never found for another key.
 *
 * Two live digests sharing the integer (about one pair in 20 for 10,000 entries; grows with
 * the square of the count) cannot share the main map: the one that came second is kept in
 * a small overflow cache by its full digest, so neither ever misses for the other's sake.
 * The overflow holds at most `max(16, max / 1024)` entries (expected pairs: 5 at 100,000,
 * 500 at a million), and counts toward `max`: the two together never hold more than
 * `max` entries (the documented bound of `cache.max` and `cache.negativeMax`). The
 * integer is mixed with a per-cache random salt, so which of the `Map`'s buckets a digest
 * lands in cannot be chosen (V8 hashes integer keys unseeded).
 */
export class DigestCache<V extends DigestSlot> {
  readonly #main: LruCache<V, number>;
  /** Entries whose integer a different live digest holds in `#main`: rare, so usually empty. */
  readonly #overflow: LruCache<V>;
  #salt = 0;
  /** Draws the salt, on the first `set` (see the constructor); `undefined` once drawn. */
  #drawSalt: (() => number) | undefined;
  readonly #max: number;

  /**
   * `salt`: random bits (any integer; its low 30 bits are used), or a function drawing
   * them, called on the first `set`: an empty cache answers nothing whatever its salt, and
   * a keyring made at start-up draws no random numbers then (workerd forbids them in a
   * worker's global scope).
   */
  constructor(max: number, salt: number | (() => number)) {
    this.#main = new LruCache<V, number>(max);
    this.#overflow = new LruCache<V>(max > 0 ? Math.max(16, Math.ceil(max / 1024)) : 0);
    if (typeof salt === 'function') this.#drawSalt = salt;
    else this.#salt = salt & 0x3fffffff;
    this.#max = max;
  }

  get size(): number {
    return this.#main.size + this.#overflow.size;
  }

  /** The integer a digest is looked up by: its first 30 bits, salted. Always a small integer (Smi). */
  #slotOf(digest: string): number {
    const bits = (digest.charCodeAt(0) << 22) | (digest.charCodeAt(1) << 14) | (digest.charCodeAt(2) << 6) | (digest.charCodeAt(3) >>> 2);
    return bits ^ this.#salt;
  }

  /** The live value stored under `digest` at time `now`, marking it used. */
  get(digest: string, now: number): V | undefined {
    const value = this.#main.get(this.#slotOf(digest), now);
    if (value !== undefined && value.digestKey === digest) return value;
    return this.#overflow.size === 0 ? undefined : this.#overflow.get(digest, now);
  }

  /** Stores `value` under `digest` until `until` (epoch ms), replacing that digest's entry; see `LruCache.set`. */
  set(digest: string, value: V, until: number, now: number): void {
    if (this.#drawSalt !== undefined) {
      // Nothing is held before the first set (clear() may empty it later, with the salt kept).
      this.#salt = this.#drawSalt() & 0x3fffffff;
      this.#drawSalt = undefined;
    }
    value.digestKey = digest;
    const slot = this.#slotOf(digest);
    const held = this.#main.peek(slot);
    if (held !== undefined && held.digestKey !== digest && now < held.until) {
      this.#overflow.set(digest, value, until);
      // Over the bound: one entry of the main map goes (never the one just set).
      if (this.size > this.#max) this.#main.evictOne();
      return;
    }
    if (this.#overflow.size !== 0) this.#overflow.delete(digest);
    this.#main.set(slot, value, until);
    // Over the bound: one entry of the overflow goes (the one just set is in the main map).
    if (this.size > this.#max) this.#overflow.evictOne();
  }

  /** Drops the entry of `digest`, if held (never another digest's). */
  delete(digest: string): void {
    const slot = this.#slotOf(digest);
    if (this.#main.peek(slot)?.digestKey === digest) this.#main.delete(slot);
    else if (this.#overflow.size !== 0) this.#overflow.delete(digest);
  }

  /** Drops every entry whose value matches; returns how many went. */
  deleteWhere(predicate: (value: V) => boolean): number {
    return this.#main.deleteWhere(predicate) + this.#overflow.deleteWhere(predicate);
  }

  clear(): void {
    this.#main.clear();
    this.#overflow.clear();
  }
}
