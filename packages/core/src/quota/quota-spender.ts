/**
 * The limiter's quota step: spend a request's `cost` from its key's quota in the quota
 * store, with a timeout, and turn the answer into a `QuotaDecision`. A failing store is
 * never replaced by a local count (it would start from the full credits and hand them out
 * a second time): with `onStoreError: 'open'` the request is admitted uncounted, otherwise
 * it is refused with 503 `unavailable`. Failures are logged through a failure log on the
 * spender: the first of a kind at once, then one line per interval with a count, and one
 * line when the store answers again, never a line per request.
 * @module
 */
import type { Clock } from '../clock.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { createFailureLog } from '../internal/failure-log.ts';
import { withTimeout } from '../internal/silence-timeout.ts';
import { quotaPeriodStart, quotaSpend } from './quota-period.ts';
import type { Quota, QuotaDecision, QuotaStore } from './types.ts';

/** Internal: what `createRateLimiter` passes. */
export interface QuotaSpenderOptions {
  store: QuotaStore;
  clock: Clock;
  timeoutMs: number;
  failOpen: boolean;
  retryAfterSeconds: number;
  warn(details: Record<string, unknown>, message: string): void;
  /**
   * How often an ongoing outage is logged again, with the count since.
   * @default 10000
   */
  failureLogIntervalMs?: number;
}

/** Internal: spends or reads a quota. */
export interface QuotaSpender {
  spend(key: string, quota: Quota, cost: number): Promise<QuotaDecision & { degraded?: 'open' }>;
}

/** Creates the quota step of a limiter. */
export function createQuotaSpender(options: QuotaSpenderOptions): QuotaSpender {
  const { store, clock, timeoutMs, failOpen, retryAfterSeconds, warn, failureLogIntervalMs = 10_000 } = options;
  if (typeof store?.spend !== 'function') throw new ConfigError('quotaStore must implement spend(request)');
  const failures = createFailureLog({ write: warn, clock, intervalMs: failureLogIntervalMs });

  return Object.freeze({
    async spend(key: string, quota: Quota, cost: number): Promise<QuotaDecision & { degraded?: 'open' }> {
      const now = clock();
      const request = quotaSpend(key, quota, cost, now);
      const refill = quota.refill;
      const nextRefillAt = refill === null ? null : quotaPeriodStart(refill.interval, request.period + 1, quota.setAt.getTime());
      let answer;
      try {
        const pending = store.spend(request);
        answer = isPromise(pending) ? await withTimeout(pending, timeoutMs, 'quota store') : pending;
        if (failures.failing) failures.recovered('quota spend', 'quota store answers again');
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        failures.failed('quota spend', error, 'quota store failed', { mode: failOpen ? 'open' : 'closed' });
        if (failOpen) return { allowed: true, cost: 0, remaining: 0, nextRefillAt: nextRefillAt === null ? null : new Date(nextRefillAt), retryAfterSeconds: 0, degraded: 'open' };
        throw new KeysetError('unavailable', {
          detail: 'Usage quotas are temporarily unavailable; retry shortly.',
          cause: error,
          headers: { 'retry-after': String(retryAfterSeconds) },
        });
      }
      // A refused cost that even a refill could not cover gets no Retry-After: waiting will not help.
      const waitable = !answer.allowed && refill !== null && nextRefillAt !== null && refill.amount >= cost;
      return {
        allowed: answer.allowed,
        cost: answer.allowed ? cost : 0,
        remaining: answer.remaining,
        nextRefillAt: nextRefillAt === null ? null : new Date(nextRefillAt),
        retryAfterSeconds: waitable ? Math.max(1, Math.ceil(((nextRefillAt as number) - now) / 1000)) : 0,
      };
    },
  });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
