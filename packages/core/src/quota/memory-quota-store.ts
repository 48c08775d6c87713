/**
 * In-process quota store: one `{ generation, period, remaining }` per key in a Map. Not
 * bounded and never evicted: forgetting a count would hand its credits back, and only
 * identities that have a quota ever get an entry. The count lives as long as the process;
 * several instances each count on their own (use `@keyset/redis` or `@keyset/postgres`).
 * @module
 */
import { applyQuotaSpend, type QuotaState } from './quota-period.ts';
import { checkQuotaSpend } from './check-quota-spend.ts';
import type { QuotaSpend, QuotaStore, QuotaStoreResult } from './types.ts';

/** The memory quota store: synchronous `spend`. */
export interface MemoryQuotaStore extends QuotaStore {
  spend(request: QuotaSpend): QuotaStoreResult;
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
    get size(): number {
      return states.size;
    },
    close(): Promise<void> {
      states = new Map();
      return Promise.resolve();
    },
  });
}

