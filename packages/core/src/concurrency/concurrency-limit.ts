/**
 * The guard's in-flight limit: an admitted
 * request takes a lease on its key and gives it back with `release()` when its response
 * is finished. Adapters call `release()` on every path (sent, handler error, client
 * abort); a lease never released (an instance that died) expires after `leaseTtlSeconds`.
 * Built by the application (`concurrency: createConcurrencyLimit({ max })`), like the
 * `limiter`: a guard without one bundles none of this module's code.
 * @module
 */
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { VerifiedKey, VerifiedOwner } from '../keys/key-record.ts';
import type { RateLimitLogger } from '../rate-limit/types.ts';
import { createMemoryConcurrencyStore } from './memory-concurrency-store.ts';
import type { ConcurrencyStore, HeldLeases, LeaseClaim, LeaseClaims, LeaseDecision } from './types.ts';
import type { LimitMode, WouldRefusal } from '../rate-limit/limit-mode.ts';
import { isRequestStore } from '../rate-limit/request-store.ts';
import { consoleWarnLogger, errorLine } from '../internal/console-warn.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { toHex } from '../internal/hex.ts';

export type { HeldLeases, LeaseClaims } from './types.ts';

/**
 * An in-flight cap with its mode: `{ max: 5, mode: 'observe' }` (shadow mode) counts the
 * leases as an enforced cap of 5 would, but at 5 it never refuses: the request is served,
 * reported as `would_refuse` (`concurrency_limited`), and takes none of the observed leases
 * (as an enforced refusal takes none), so its leases never stand in anyone's way.
 */
export interface InFlightCap {
  /** Live leases allowed, an integer ≥ 1. */
  max: number;
  /** @default 'enforce' */
  mode?: LimitMode;
}

/** Live leases per key, as a number (or cap) for every key or read from the key; `null` = no limit. */
export type ConcurrencyMax = number | InFlightCap | ((key: VerifiedKey) => number | InFlightCap | null | undefined);

/** Live leases per owner (all its keys together), as a number (or cap) or read from the owner; `null` = no limit. */
export type OwnerConcurrencyMax = number | InFlightCap | ((owner: VerifiedOwner, key: VerifiedKey) => number | InFlightCap | null | undefined);

/** Options of `createConcurrencyLimit`. */
export interface ConcurrencyOptions {
  /**
   * Requests of one key at work at once (an integer ≥ 1), or a function of the verified
   * key, e.g. `(key) => key.metadata.plan === 'pro' ? 20 : 5`; `null` leaves a key unlimited.
   */
  max?: ConcurrencyMax;
  /**
   * Requests of one owner's keys at work at once, all its keys together, e.g.
   * `(owner) => owner.metadata.plan === 'pro' ? 50 : 10`. Keys without an owner are not
   * counted here. A request takes its key's lease, then its owner's; refused by either,
   * it holds neither.
   * @default no owner limit
   */
  ownerMax?: OwnerConcurrencyMax;
  /**
   * Where leases live. Pass `createRedisConcurrencyStore` (`@keyset/redis`) to count across instances.
   * @default createMemoryConcurrencyStore()
   */
  store?: ConcurrencyStore;
  /**
   * How long a lease lasts when it is never given back (its instance died): the key's
   * requests count against `max` until then. While its request is at work, a lease is
   * renewed every third of this time (with a store that can, as the memory and Redis
   * stores can), so a stream of any length keeps its slot.
   * @default 60
   */
  leaseTtlSeconds?: number;
  /**
   * `Retry-After` of a `concurrency_limited` refusal: a slot frees when any request of the
   * key finishes, which no clock predicts.
   * @default 1
   */
  retryAfterSeconds?: number;
  /**
   * When the store fails: `'closed'` refuses with 503 `unavailable`, `'open'` admits
   * without a lease.
   * @default 'closed'
   */
  onStoreError?: 'open' | 'closed';
  /**
   * Told once when the store starts failing (and which answer `onStoreError` gives) and
   * once when it answers again: with `'open'` the cap is not enforced meanwhile, which an
   * operator must be able to see. Pass the limiter's logger (a pino logger fits).
   * @default console.warn
   */
  logger?: RateLimitLogger;
  /**
   * Cryptography provider: 16 random bytes name this limit's leases, unique across instances.
   * @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere)
   */
  crypto?: CryptoProvider;
}

/** Gives a request's lease back; calling it again does nothing. */
export type ReleaseLease = () => void;

/** Nothing to give back (no limit on the key): one shared function, no allocation. */
export const NO_LEASE: ReleaseLease = () => {};

/** An in-flight limit, the guard's `concurrency` option. */
export interface ConcurrencyLimit {
  /** Takes a lease for `key`; rejects with `concurrency_limited` (429) when `max` are at work. */
  acquire(key: VerifiedKey): Promise<ReleaseLease>;
  /**
   * The leases `key` needs, without taking them (`undefined`: none applies), for a limiter
   * whose store decides them with the limits (`RateLimiter.checkWithLeases`).
   */
  claim?(key: VerifiedKey): LeaseClaims | undefined;
}

/** Every name `ConcurrencyOptions` knows, checked when the limit is made. */
const CONCURRENCY_OPTIONS = { max: true, ownerMax: true, store: true, leaseTtlSeconds: true, retryAfterSeconds: true, onStoreError: true, logger: true, crypto: true } as const satisfies KnownOptions<ConcurrencyOptions>;

/**
 * An in-flight limit per key and per owner for `createApiKeyGuard({ concurrency })`.
 * Throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, concurrency: createConcurrencyLimit({ max: 5 }) });
 * ```
 */
export function createConcurrencyLimit(options: ConcurrencyOptions): ConcurrencyLimit {
  if (typeof options !== 'object' || options === null) throw new ConfigError('createConcurrencyLimit needs { max, ownerMax?, store?, leaseTtlSeconds? }');
  assertKnownOptions('createConcurrencyLimit', options, CONCURRENCY_OPTIONS);
  const { max, ownerMax, store = createMemoryConcurrencyStore(), leaseTtlSeconds = 60, retryAfterSeconds = 1, onStoreError = 'closed', logger = consoleWarnLogger, crypto = defaultCrypto } = options;
  if (max === undefined && ownerMax === undefined) throw new ConfigError('concurrency needs max (per key), ownerMax (per owner) or both');
  if (max !== undefined && typeof max !== 'function' && capOf(max) === undefined) throw new ConfigError(`concurrency.max must be an integer ≥ 1, { max, mode }, or a function of the key, got ${JSON.stringify(max)}`);
  if (ownerMax !== undefined && typeof ownerMax !== 'function' && capOf(ownerMax) === undefined) {
    throw new ConfigError(`concurrency.ownerMax must be an integer ≥ 1, { max, mode }, or a function of the owner, got ${JSON.stringify(ownerMax)}`);
  }
  if (typeof store?.acquire !== 'function' || typeof store.release !== 'function') {
    throw new ConfigError('concurrency.store must be a ConcurrencyStore (createMemoryConcurrencyStore, createRedisConcurrencyStore)');
  }
  if (!(Number.isFinite(leaseTtlSeconds) && leaseTtlSeconds > 0)) throw new ConfigError(`concurrency.leaseTtlSeconds must be a positive number, got ${String(leaseTtlSeconds)}`);
  if (!Number.isSafeInteger(retryAfterSeconds) || retryAfterSeconds < 1) throw new ConfigError(`concurrency.retryAfterSeconds must be an integer ≥ 1, got ${String(retryAfterSeconds)}`);
  if (onStoreError !== 'open' && onStoreError !== 'closed') throw new ConfigError(`concurrency.onStoreError must be 'open' or 'closed', got ${JSON.stringify(onStoreError)}`);
  if (typeof logger?.warn !== 'function') throw new ConfigError('concurrency.logger must have a warn(details, message) method (a pino logger fits)');
  if (typeof crypto?.randomBytes !== 'function') throw new ConfigError('concurrency.crypto must be a CryptoProvider (randomBytes)');
  const ttlMs = Math.ceil(leaseTtlSeconds * 1000);
  // Lease ids: this limiter's random id and a counter, unique across instances.
  const instance = toHex(crypto.randomBytes(16));
  let issued = 0;
  // Whether the last store call failed: the outage is logged once, and its end once.
  let storeDown = false;
  // The leases of requests at work (lease id → holder), renewed together every third of
  // their time to live by one timer that runs only while there are any: a long stream
  // keeps its slot, and an instance that dies stops renewing, so its leases still end
  // within one time to live.
  const working = new Map<string, LeaseClaim>();
  let renewal: ReturnType<typeof setInterval> | undefined;

  /** The limits that apply to `key`: its own and its owner's (`undefined` for none). */
  function limitsOf(key: VerifiedKey): { keyLimit: Cap | undefined; ownerLimit: Cap | undefined } {
    const keyLimit = limitOf(max === undefined ? undefined : typeof max === 'function' ? max(key) : max, 'max(key)');
    const owner = key.owner ?? null;
    const ownerLimit = owner === null || ownerMax === undefined ? undefined : limitOf(typeof ownerMax === 'function' ? ownerMax(owner, key) : ownerMax, 'ownerMax(owner)');
    return { keyLimit, ownerLimit };
  }

  /**
   * A fresh lease on `holder`. A key's lease lives in its owner's partition when it has one,
   * else in the key's own, beside its rate-limit pairs and quota count (one Cluster slot).
   */
  function leaseOf(holder: string, limit: Cap, partition: string | undefined): LeaseClaim {
    const leaseId = `${instance}:${(issued += 1)}`;
    const lease: { -readonly [K in keyof LeaseClaim]: LeaseClaim[K] } = { holder, leaseId, max: limit.max, ttlMs };
    if (partition !== undefined) lease.partition = partition;
    if (limit.observe) lease.observe = true;
    return lease;
  }

  function claimsOf(key: VerifiedKey): LeaseClaim[] {
    const { keyLimit, ownerLimit } = limitsOf(key);
    const owner = key.owner ?? null;
    const claims: LeaseClaim[] = [];
    if (keyLimit !== undefined) claims.push(leaseOf(`key:${key.id}`, keyLimit, owner === null ? key.id : `owner:${owner.id}`));
    if (ownerLimit !== undefined && owner !== null) claims.push(leaseOf(`owner:${owner.id}`, ownerLimit, undefined));
    return claims;
  }

  /** The step-by-step path, for a guard without `claim`: every lease of `key` (see `takeAll`). */
  async function acquire(key: VerifiedKey): Promise<ReleaseLease> {
    const leases = claimsOf(key);
    return leases.length === 0 ? NO_LEASE : (await takeAll(leases)).release;
  }

  /**
   * The enforced leases one after another (the key's, then its owner's; refused by either,
   * it holds neither), then the observed ones, all or none: one at its cap would refuse the
   * request, so none is kept, as an enforced refusal keeps none.
   */
  async function takeAll(leases: readonly LeaseClaim[]): Promise<HeldLeases> {
    const held: ReleaseLease[] = [];
    try {
      for (const lease of leases) if (lease.observe !== true) held.push(await take(lease));
    } catch (error) {
      for (const release of held) release();
      throw error;
    }
    const observed: ReleaseLease[] = [];
    let wouldRefuse: WouldRefusal | undefined;
    for (const lease of leases) {
      if (lease.observe !== true) continue;
      const release = await takeObserved(lease);
      if (release !== undefined) {
        observed.push(release);
        continue;
      }
      wouldRefuse = { reason: 'concurrency_limited', policy: lease.holder.startsWith('owner:') ? 'owner.in_flight' : 'in_flight' };
      for (const r of observed.splice(0)) r();
      break;
    }
    const releaseObserved = (): void => {
      for (const r of observed.splice(0)) r();
    };
    return {
      wouldRefuse,
      releaseObserved,
      release: () => {
        for (const r of held.splice(0)) r();
        releaseObserved();
      },
    };
  }

  /** An observed lease: its release, or `undefined` at its cap. A store that fails leaves it uncounted: an observed cap never refuses, not even with 503. */
  async function takeObserved(lease: LeaseClaim): Promise<ReleaseLease | undefined> {
    try {
      return await take(lease);
    } catch (error) {
      if (isKeysetError(error) && error.code === 'concurrency_limited') return undefined;
      return NO_LEASE;
    }
  }

  function claim(key: VerifiedKey): LeaseClaims | undefined {
    const leases = claimsOf(key);
    if (leases.length === 0) return undefined;
    return {
      store,
      leases,
      refusal: (index: number) => refused(leases[index] as LeaseClaim),
      held: () => heldTogether(leases),
      take: () => takeAll(leases),
    };
  }

  /** The 429 for a lease refused: whose cap it was and how many are at work. */
  function refused(lease: LeaseClaim): KeysetError {
    const whose = lease.holder.startsWith('key:') ? 'key' : 'owner';
    return new KeysetError('concurrency_limited', {
      detail: `${lease.max} requests of this ${whose === 'key' ? 'key' : "key's owner"} are already in progress; retry once one has finished.`,
      extensions: { max_in_flight: lease.max, limited: whose, retry_after: retryAfterSeconds },
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }

  /** One lease: the function that gives it back, or a rejection (refused, or the store failed closed). */
  async function take(lease: LeaseClaim): Promise<ReleaseLease> {
    const { holder, leaseId, partition } = lease;
    let decision: LeaseDecision;
    try {
      decision = await store.acquire(holder, leaseId, lease.max, ttlMs, partition);
    } catch (cause) {
      if (!storeDown) {
        storeDown = true;
        const answer = onStoreError === 'open' ? 'admitting requests without a lease (the in-flight cap is not enforced)' : 'refusing requests with 503';
        logger.warn({ mode: onStoreError, error: errorLine(cause) }, `in-flight store failed; ${answer} until it answers again`);
      }
      if (onStoreError === 'open') return NO_LEASE;
      throw new KeysetError('unavailable', { detail: 'The in-flight limit cannot be checked; try again shortly.', cause, headers: { 'retry-after': String(retryAfterSeconds) } });
    }
    if (storeDown) {
      storeDown = false;
      logger.warn({ mode: onStoreError }, 'in-flight store answers again');
    }
    if (!decision.acquired) throw refused(lease);
    track(lease);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      untrack(leaseId);
      // Off the response path: a failed give-back leaves the lease to expire.
      giveBack(lease).catch(() => {});
    };
  }

  /** Leases a one-step store took together: given back together, in one store call when it can. */
  function heldTogether(leases: readonly LeaseClaim[]): ReleaseLease {
    for (const lease of leases) track(lease);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const lease of leases) untrack(lease.leaseId);
      giveBackAll(leases).catch(() => {});
    };
  }

  async function giveBackAll(leases: readonly LeaseClaim[]): Promise<void> {
    if (isRequestStore(store)) await store.releaseLeases(leases);
    else await Promise.all(leases.map(giveBack));
  }

  /** The store's release, a synchronous throw included, as one promise. */
  async function giveBack(lease: LeaseClaim): Promise<void> {
    await store.release(lease.holder, lease.leaseId, lease.partition);
  }

  function track(lease: LeaseClaim): void {
    if (store.renew === undefined) return;
    working.set(lease.leaseId, lease);
    if (renewal !== undefined) return;
    renewal = setInterval(renewAll, Math.max(1, Math.floor(ttlMs / 3)));
    // A process is not kept alive for renewals alone (Node's timers have unref; others need none).
    (renewal as unknown as { unref?: () => void }).unref?.();
  }

  function untrack(leaseId: string): void {
    if (!working.delete(leaseId) || working.size > 0 || renewal === undefined) return;
    clearInterval(renewal);
    renewal = undefined;
  }

  function renewAll(): void {
    for (const [leaseId, lease] of working) {
      // A lease the store no longer holds (it expired meanwhile) is not renewed again; a
      // store that fails is asked again next time, until the lease expires.
      renewOne(lease).then((live) => live || untrack(leaseId), () => {});
    }
  }

  /** The store's renew, a synchronous throw included, as one promise. */
  async function renewOne(lease: LeaseClaim): Promise<boolean> {
    return (await store.renew?.(lease.holder, lease.leaseId, ttlMs, lease.partition)) === true;
  }

  return Object.freeze({ acquire, claim });
}

/** A cap as the limit uses it. */
interface Cap {
  readonly max: number;
  readonly observe: boolean;
}

/** `value` as a cap (a number, or `{ max, mode }`), or `undefined` when it is neither. */
function capOf(value: unknown): Cap | undefined {
  if (Number.isSafeInteger(value) && (value as number) >= 1) return { max: value as number, observe: false };
  if (typeof value !== 'object' || value === null) return undefined;
  const { max, mode, ...rest } = value as { max?: unknown; mode?: unknown };
  if (!Number.isSafeInteger(max) || (max as number) < 1 || Object.keys(rest).length > 0) return undefined;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'observe') return undefined;
  return { max: max as number, observe: mode === 'observe' };
}

/** A limit as `max`/`ownerMax` gave it: `undefined` for none, else a cap. */
function limitOf(value: number | InFlightCap | null | undefined, what: string): Cap | undefined {
  if (value === null || value === undefined) return undefined;
  const cap = capOf(value);
  if (cap === undefined) throw new ConfigError(`concurrency.${what} must return an integer ≥ 1, { max, mode: 'enforce' | 'observe' } or null, got ${JSON.stringify(value)}`);
  return cap;
}
