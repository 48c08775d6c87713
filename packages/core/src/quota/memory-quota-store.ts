/**
 * In-process quota store: one `{ generation, period, remaining }` per key (an identity id,
 * or `owner:<id>` for an owner's quota) in a Map. Not
 * bounded and never evicted: forgetting a count would hand its credits back, and only
 * identities that have a quota ever get an entry. The count lives as long as the process;
 * several instances each count on their own (use `@keyset/redis` or `@keyset/postgres`).
 * @module
 */
import { applyQuotaSpend, applyQuotaSpends, type QuotaState } from './quota-period.ts';
import { checkQuotaSpend, checkQuotaSpends } from './check-quota-spend.ts';
import type { QuotaSpend, QuotaStore, QuotaStoreResult } from './types.ts';

/** The memory quota store: synchronous `spend`. */
export interface MemoryQuotaStore extends QuotaStore {
  spend(request: QuotaSpend): QuotaStoreResult;
  spendAll(requests: readonly QuotaSpend[]): QuotaStoreResult[];
  /** Keys held. */
  readonly size: number;
  close(): Promise<void>;
}

/**
 * Creates an in-process quota store. Atomic by construction: `spend` is synchronous.
 *
 * @example
 * ```ts
 * const quotas = createMemoryQuotaStore();
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, quotaStore: quotas });
 * ```
 */
export function createMemoryQuotaStore(): MemoryQuotaStore {
  let states = new Map<string, QuotaState>();
  return Object.freeze({
    spend(request: QuotaSpend): QuotaStoreResult {
      checkQuotaSpend(request);
      const { state, result } = applyQuotaSpend(states.get(request.key), request);
      states.set(request.key, state);
      return result;
    },
    // One synchronous step: no other spend can run between the check and the decrement.
    spendAll(requests: readonly QuotaSpend[]): QuotaStoreResult[] {
      checkQuotaSpends(requests);
      const { states: next, results } = applyQuotaSpends(
        requests.map((r) => states.get(r.key)),
        requests,
      );
      requests.forEach((r, i) => states.set(r.key, next[i] as QuotaState));
      return results;
    },
    get size(): number {
      return states.size;
    },
    close(): Promise<void> {
      states = new Map();
      return Promise.resolve();
    },
  });
}

