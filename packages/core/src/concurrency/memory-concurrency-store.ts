/**
 * In-flight leases in memory: one instance's requests. Per holder, a map of lease id →
 * expiry; expired leases are pruned by the next `acquire` of the same holder, and a holder
 * with none left is dropped, so memory follows the leases alive, not the keys ever seen.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { systemClock, type Clock } from '../clock.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { ConcurrencyStore, LeaseDecision } from './types.ts';

/** Options of `createMemoryConcurrencyStore`. */
export interface MemoryConcurrencyStoreOptions {
  /**
   * Milliseconds since the epoch; tests pass a fake one.
   * @default Date.now
   */
  clock?: Clock;
}

const STORE_OPTIONS = { clock: true } as const satisfies KnownOptions<MemoryConcurrencyStoreOptions>;
const TAKEN: LeaseDecision = Object.freeze({ acquired: true });
const REFUSED: LeaseDecision = Object.freeze({ acquired: false });

/**
 * Creates an in-memory lease store (synchronous answers). For several instances use
 * `createRedisConcurrencyStore` from `@keyset/redis`.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, concurrency: createConcurrencyLimit({ max: 5, store: createMemoryConcurrencyStore() }) });
 * ```
 */
export function createMemoryConcurrencyStore(options: MemoryConcurrencyStoreOptions = {}): ConcurrencyStore {
  assertKnownOptions('createMemoryConcurrencyStore', options, STORE_OPTIONS);
  const { clock = systemClock } = options;
  if (typeof clock !== 'function') throw new ConfigError('clock must be a function returning milliseconds since the epoch');
  const holders = new Map<string, Map<string, number>>();

  function acquire(holder: string, leaseId: string, max: number, ttlMs: number): LeaseDecision {
    const now = clock();
    let leases = holders.get(holder);
    if (leases !== undefined) for (const [id, expiresAt] of leases) if (expiresAt <= now) leases.delete(id);
    if ((leases?.size ?? 0) >= max) return REFUSED;
    if (leases === undefined) holders.set(holder, (leases = new Map()));
    leases.set(leaseId, now + ttlMs);
    return TAKEN;
  }

  function renew(holder: string, leaseId: string, ttlMs: number): boolean {
    const leases = holders.get(holder);
    const expiresAt = leases?.get(leaseId);
    if (leases === undefined || expiresAt === undefined) return false;
    const now = clock();
    // Expired is expired: the next acquire would have pruned it.
    if (expiresAt <= now) return false;
    leases.set(leaseId, now + ttlMs);
    return true;
  }

  function release(holder: string, leaseId: string): void {
    const leases = holders.get(holder);
    if (leases === undefined) return;
    leases.delete(leaseId);
    if (leases.size === 0) holders.delete(holder);
  }

  return Object.freeze({ acquire, release, renew });
}
