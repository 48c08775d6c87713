/**
 * The guard's in-flight limit (docs/rate-limits.md, "In-flight limits"): an admitted
 * request takes a lease on its key and gives it back with `release()` when its response
 * is finished. Adapters call `release()` on every path (sent, handler error, client
 * abort); a lease never released (an instance that died) expires after `leaseTtlSeconds`.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import type { VerifiedKey } from '../keys/key-record.ts';
import { createMemoryConcurrencyStore } from './memory-concurrency-store.ts';
import type { ConcurrencyStore, LeaseDecision } from './types.ts';

/** Live leases per key, as a number for every key or read from the key; `null` = no limit. */
export type ConcurrencyMax = number | ((key: VerifiedKey) => number | null | undefined);

/** The guard's `concurrency` option. */
export interface ConcurrencyOptions {
  /**
   * Requests of one key at work at once (an integer ≥ 1), or a function of the verified
   * key, e.g. `(key) => key.metadata.plan === 'pro' ? 20 : 5`; `null` leaves a key unlimited.
   */
  max: ConcurrencyMax;
  /**
   * Where leases live. Pass `createRedisConcurrencyStore` (`@keyset/redis`) to count across instances.
   * @default createMemoryConcurrencyStore()
   */
  store?: ConcurrencyStore;
  /**
   * How long a lease lasts when it is never given back (its instance died): the key's
   * requests count against `max` until then. Set it above your slowest request: a request
   * still at work when its lease expires no longer counts.
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
}

/** Gives a request's lease back; calling it again does nothing. */
export type ReleaseLease = () => void;

/** Nothing to give back (no limit on the key): one shared function, no allocation. */
export const NO_LEASE: ReleaseLease = () => {};

/** The guard's side of the limit. */
export interface ConcurrencyLimit {
  /** Takes a lease for `key`; throws `concurrency_limited` (429) when `max` are at work. */
  acquire(key: VerifiedKey, headers: Record<string, string>): ReleaseLease | Promise<ReleaseLease>;
}

/** Builds the limit the guard runs; throws `ConfigError` saying what to change. */
export function createConcurrencyLimit(options: ConcurrencyOptions): ConcurrencyLimit {
  if (typeof options !== 'object' || options === null) throw new ConfigError('concurrency must be { max, store?, leaseTtlSeconds? }');
  const { max, store = createMemoryConcurrencyStore(), leaseTtlSeconds = 60, retryAfterSeconds = 1, onStoreError = 'closed' } = options;
  if (typeof max !== 'function' && !validMax(max)) throw new ConfigError(`concurrency.max must be an integer ≥ 1 or a function of the key, got ${String(max)}`);
  if (typeof store?.acquire !== 'function' || typeof store.release !== 'function') {
    throw new ConfigError('concurrency.store must be a ConcurrencyStore (createMemoryConcurrencyStore, createRedisConcurrencyStore)');
  }
  if (!(Number.isFinite(leaseTtlSeconds) && leaseTtlSeconds > 0)) throw new ConfigError(`concurrency.leaseTtlSeconds must be a positive number, got ${String(leaseTtlSeconds)}`);
  if (!Number.isSafeInteger(retryAfterSeconds) || retryAfterSeconds < 1) throw new ConfigError(`concurrency.retryAfterSeconds must be an integer ≥ 1, got ${String(retryAfterSeconds)}`);
  if (onStoreError !== 'open' && onStoreError !== 'closed') throw new ConfigError(`concurrency.onStoreError must be 'open' or 'closed', got ${JSON.stringify(onStoreError)}`);
  const ttlMs = Math.ceil(leaseTtlSeconds * 1000);
  // Lease ids: this limiter's random id and a counter, unique across instances.
  const instance = crypto.randomUUID();
  let issued = 0;

  function acquire(key: VerifiedKey, headers: Record<string, string>): ReleaseLease | Promise<ReleaseLease> {
    const limit = typeof max === 'function' ? max(key) : max;
    if (limit === null || limit === undefined) return NO_LEASE;
    if (!validMax(limit)) throw new ConfigError(`concurrency.max(key) must return an integer ≥ 1 or null, got ${String(limit)}`);
    const holder = `key:${key.id}`;
    const leaseId = `${instance}:${(issued += 1)}`;
    const granted = (decision: LeaseDecision): ReleaseLease => {
      if (!decision.acquired) throw refusal(limit, headers);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        // Off the response path: a failed give-back leaves the lease to expire.
        try {
          const done = store.release(holder, leaseId);
          if (done instanceof Promise) done.catch(() => {});
        } catch {
          // Same: the lease expires after leaseTtlSeconds.
        }
      };
    };
    const failed = (cause: unknown): ReleaseLease => {
      if (onStoreError === 'open') return NO_LEASE;
      throw new KeysetError('unavailable', { detail: 'The in-flight limit cannot be checked; try again shortly.', cause, headers: { ...headers, 'retry-after': String(retryAfterSeconds) } });
    };
    let decision: LeaseDecision | Promise<LeaseDecision>;
    try {
      decision = store.acquire(holder, leaseId, limit, ttlMs);
    } catch (error) {
      return failed(error);
    }
    return decision instanceof Promise ? decision.then(granted, failed) : granted(decision);
  }

  function refusal(limit: number, headers: Record<string, string>): KeysetError {
    return new KeysetError('concurrency_limited', {
      detail: `${limit} requests of this key are already in progress; retry once one has finished.`,
      extensions: { max_in_flight: limit, retry_after: retryAfterSeconds },
      headers: { ...headers, 'retry-after': String(retryAfterSeconds) },
    });
  }

  return Object.freeze({ acquire });
}

function validMax(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}
