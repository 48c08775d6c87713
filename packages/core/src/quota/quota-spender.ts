/**
 * The limiter's quota step: spend a request's `cost` from its key's quota, and from its
 * owner's when it has one, in the quota store (one `spendAll` call for both, decided
 * together), with a timeout, and turn the answers into `QuotaDecision`s. A failing store is
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
import type { Quota, QuotaDecision, QuotaSpend, QuotaStore, QuotaStoreResult } from './types.ts';

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

/** Internal: one quota of a request: whose (`key`, an identity id or `owner:<id>`), its settings, its Cluster partition. */
export interface QuotaEntry {
  key: string;
  quota: Quota;
  partition?: string;
}

/** Internal: a spend's outcome for one quota; `allowed` says whether that quota covered the cost. */
export type SpentQuota = QuotaDecision & { degraded?: 'open' };

/** Internal: spends or reads a quota. */
export interface QuotaSpender {
  spend(key: string, quota: Quota, cost: number, partition?: string): Promise<SpentQuota>;
  /**
   * Spends `cost` from every quota of `entries` at once, all-or-nothing (`QuotaStore.spendAll`
   * for several, `spend` for one): one decision per entry, in order; the cost was spent
   * only when every `allowed` is true.
   */
  spendAll(entries: readonly QuotaEntry[], cost: number): Promise<SpentQuota[]>;
  /** The store requests of `entries` at `now` (ms), for a store that spends them within a larger step. */
  plan(entries: readonly QuotaEntry[], cost: number, now: number): QuotaPlan;
  /** The decisions a plan's store answers give, one per entry. */
  settle(plan: QuotaPlan, answers: readonly QuotaStoreResult[]): SpentQuota[];
}

/** Internal: the store requests of one spend, and when each quota refills next. */
export interface QuotaPlan {
  readonly entries: readonly QuotaEntry[];
  readonly cost: number;
  /** The clock (epoch ms) the periods were read at. */
  readonly now: number;
  readonly requests: QuotaSpend[];
  /** Epoch ms of each quota's next refill, `null` without one. */
  readonly nextRefills: (number | null)[];
}

function planSpends(entries: readonly QuotaEntry[], cost: number, now: number): QuotaPlan {
  const requests = entries.map(({ key, quota, partition }) => {
    const request: QuotaSpend = quotaSpend(key, quota, cost, now);
    if (partition !== undefined) request.partition = partition;
    if (quota.mode === 'observe') request.observe = true;
    return request;
  });
  const nextRefills = entries.map(({ quota }, i) =>
    quota.refill === null ? null : quotaPeriodStart(quota.refill.interval, (requests[i] as QuotaSpend).period + 1, quota.setAt.getTime()),
  );
  return { entries, cost, now, requests, nextRefills };
}

function settleSpends({ entries, cost, now, nextRefills }: QuotaPlan, answers: readonly QuotaStoreResult[]): SpentQuota[] {
  const spent = answers.every((a) => a.allowed);
  return answers.map((answer, i) => {
    const { refill } = (entries[i] as QuotaEntry).quota;
    const next = nextRefills[i] as number | null;
    // A refused cost that even a refill could not cover gets no Retry-After: waiting will not help.
    const waitable = !answer.allowed && refill !== null && next !== null && refill.amount >= cost;
    return {
      allowed: answer.allowed,
      cost: spent ? cost : 0,
      remaining: answer.remaining,
      nextRefillAt: next === null ? null : new Date(next),
      retryAfterSeconds: waitable ? Math.max(1, Math.ceil((next - now) / 1000)) : 0,
    };
  });
}

/** Creates the quota step of a limiter. */
export function createQuotaSpender(options: QuotaSpenderOptions): QuotaSpender {
  const { store, clock, timeoutMs, failOpen, retryAfterSeconds, warn, failureLogIntervalMs = 10_000 } = options;
  if (typeof store?.spend !== 'function') throw new ConfigError('quotaStore must implement spend(request)');
  const failures = createFailureLog({ write: warn, clock, intervalMs: failureLogIntervalMs });
  let warnedNoSpendAll = false;

  function unavailable(cause: unknown): KeysetError {
    return new KeysetError('unavailable', {
      detail: 'Usage quotas are temporarily unavailable; retry shortly.',
      cause,
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }

  async function spendAll(entries: readonly QuotaEntry[], cost: number): Promise<SpentQuota[]> {
    const plan = planSpends(entries, cost, clock());
    const { requests } = plan;
    if (requests.length > 1 && typeof store.spendAll !== 'function') {
      // Two calls could spend one quota and then find the other short: refuse instead.
      if (!warnedNoSpendAll) {
        warnedNoSpendAll = true;
        warn({ quotas: requests.length }, "the quota store has no spendAll(), so a key's and its owner's quotas cannot be spent together; refusing such requests with 503");
      }
      throw unavailable(new ConfigError('quotaStore must implement spendAll(requests) to spend an owner quota'));
    }
    let answers: QuotaStoreResult[];
    try {
      const pending: QuotaStoreResult | QuotaStoreResult[] | Promise<QuotaStoreResult | QuotaStoreResult[]> =
        requests.length === 1 ? store.spend(requests[0] as QuotaSpend) : (store.spendAll as NonNullable<QuotaStore['spendAll']>)(requests);
      const answer = isPromise(pending) ? await withTimeout(pending, timeoutMs, 'quota store') : pending;
      answers = Array.isArray(answer) ? answer : [answer];
      if (answers.length !== requests.length) throw new Error('quota store returned a wrong number of results');
      if (failures.failing) failures.recovered('quota spend', 'quota store answers again');
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      failures.failed('quota spend', error, 'quota store failed', { mode: failOpen ? 'open' : 'closed' });
      if (failOpen) {
        return plan.nextRefills.map((next) => ({ allowed: true, cost: 0, remaining: 0, nextRefillAt: next === null ? null : new Date(next), retryAfterSeconds: 0, degraded: 'open' }));
      }
      throw unavailable(error);
    }
    return settleSpends(plan, answers);
  }

  return Object.freeze({
    plan: planSpends,
    settle: settleSpends,
    async spend(key: string, quota: Quota, cost: number, partition?: string): Promise<SpentQuota> {
      return (await spendAll([partition === undefined ? { key, quota } : { key, quota, partition }], cost))[0] as SpentQuota;
    },
    spendAll,
  });
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
