/**
 * The limiter's quota step: spend a request's `cost` from its key's quota, and from its
 * owner's when it has one, in the quota store (one `spendAll` call for both, decided
 * together; the observed ones after the enforced ones covered the cost), with a timeout,
 * and turn the answers into `QuotaDecision`s. The limiter asks it and hands the decisions
 * to `request-quotas.ts`, which says what they mean for the request; the spender calls
 * neither back. A failing store is never replaced by a local count (it would start from
 * the full credits and hand them out a second time): with `onStoreError: 'open'` the
 * request is admitted uncounted, otherwise it is refused with 503 `unavailable`. Failures
 * are logged through a failure log on the spender: the first of a kind at once, then one
 * line per interval with a count, and one line when the store answers again, never a line
 * per request.
 * @module
 */
import type { Clock } from '../clock.ts';
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
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
  /**
   * Spends `cost` from a request's quotas: the enforced ones together, then, once they
   * covered it and when `observed` (no observed limit before the quotas would already
   * refuse the request), the observed ones together. One decision per entry, in order;
   * `undefined` for an observed quota not decided. Rejects with 503 `unavailable`, carrying
   * `headers` (the rate limits') and the spender's `Retry-After`, while the store fails
   * closed for an enforced quota; an observed quota whose store fails is left uncounted,
   * never refusing.
   */
  spendRequest(entries: readonly QuotaEntry[], cost: number, options: SpendRequestOptions): Promise<(SpentQuota | undefined)[]>;
  /** The store requests of `entries` at `now` (ms), for a store that spends them within a larger step. */
  plan(entries: readonly QuotaEntry[], cost: number, now: number): QuotaPlan;
  /** The decisions a plan's store answers give, one per entry. */
  settle(plan: QuotaPlan, answers: readonly QuotaStoreResult[]): SpentQuota[];
  /**
   * `settle` for a store that decided a request's quotas within a larger step as
   * `spendRequest` spends them: the enforced ones together, the observed ones together when
   * `observedDecided` (else `undefined`: not reached).
   */
  settleRequest(plan: QuotaPlan, answers: readonly QuotaStoreResult[], observedDecided: boolean): (SpentQuota | undefined)[];
}

/** Internal: how `spendRequest` spends. */
export interface SpendRequestOptions {
  /** Whether to spend the observed quotas once the enforced ones covered the cost. */
  readonly observed: boolean;
  /** What a 503 carries besides the spender's `Retry-After`: the rate limits' headers. */
  readonly headers: Readonly<Record<string, string>>;
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

  function unavailable(cause: unknown, headers: Readonly<Record<string, string>>): KeysetError {
    return new KeysetError('unavailable', {
      detail: 'Usage quotas are temporarily unavailable; retry shortly.',
      cause,
      headers: { ...headers, 'retry-after': String(retryAfterSeconds) },
    });
  }

  /** `spendAll`, with the headers a 503 carries. */
  async function spendTogether(entries: readonly QuotaEntry[], cost: number, headers: Readonly<Record<string, string>>): Promise<SpentQuota[]> {
    const plan = planSpends(entries, cost, clock());
    const { requests } = plan;
    if (requests.length > 1 && typeof store.spendAll !== 'function') {
      // Two calls could spend one quota and then find the other short: refuse instead.
      if (!warnedNoSpendAll) {
        warnedNoSpendAll = true;
        warn({ quotas: requests.length }, "the quota store has no spendAll(), so a key's and its owner's quotas cannot be spent together; refusing such requests with 503");
      }
      throw unavailable(new ConfigError('quotaStore must implement spendAll(requests) to spend an owner quota'), headers);
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
      throw unavailable(error, headers);
    }
    return settleSpends(plan, answers);
  }

  async function spendRequest(entries: readonly QuotaEntry[], cost: number, { observed, headers }: SpendRequestOptions): Promise<(SpentQuota | undefined)[]> {
    const enforced = entries.filter((e) => e.quota.mode !== 'observe');
    const shadow = enforced.length === entries.length ? [] : entries.filter((e) => e.quota.mode === 'observe');
    const spent = enforced.length === 0 ? [] : await spendTogether(enforced, cost, headers);
    if (shadow.length === 0) return spent;
    let shadowSpent: SpentQuota[] | undefined;
    if (observed && spent.every((s) => s.allowed)) {
      try {
        shadowSpent = await spendTogether(shadow, cost, headers);
      } catch (error) {
        // An observed quota never refuses, not even with 503: uncounted while its store fails (spendTogether logged it).
        if (!isKeysetError(error)) throw error;
      }
    }
    return inEntryOrder(entries, spent, shadowSpent);
  }

  function settleRequest(plan: QuotaPlan, answers: readonly QuotaStoreResult[], observedDecided: boolean): (SpentQuota | undefined)[] {
    const part = (observe: boolean): SpentQuota[] => {
      const indexes = plan.entries.flatMap((e, i) => ((e.quota.mode === 'observe') === observe ? [i] : []));
      if (indexes.length === 0) return [];
      const pick = <T>(list: readonly T[]): T[] => indexes.map((i) => list[i] as T);
      return settleSpends({ ...plan, entries: pick(plan.entries), requests: pick(plan.requests), nextRefills: pick(plan.nextRefills) }, pick(answers));
    };
    return inEntryOrder(plan.entries, part(false), observedDecided ? part(true) : undefined);
  }

  return Object.freeze({
    plan: planSpends,
    settle: settleSpends,
    settleRequest,
    async spend(key: string, quota: Quota, cost: number, partition?: string): Promise<SpentQuota> {
      return (await spendTogether([partition === undefined ? { key, quota } : { key, quota, partition }], cost, NO_HEADERS))[0] as SpentQuota;
    },
    spendAll: (entries: readonly QuotaEntry[], cost: number): Promise<SpentQuota[]> => spendTogether(entries, cost, NO_HEADERS),
    spendRequest,
  });
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The enforced and the observed decisions merged back in the order of `entries` (`undefined`: an observed quota not decided). */
function inEntryOrder(entries: readonly QuotaEntry[], enforced: readonly SpentQuota[], observed: readonly SpentQuota[] | undefined): (SpentQuota | undefined)[] {
  let e = 0;
  let o = 0;
  return entries.map((entry) => (entry.quota.mode === 'observe' ? observed?.[o++] : enforced[e++]));
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
