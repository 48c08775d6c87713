/**
 * Quota arithmetic shared by every store: validation, the refill period an instant falls
 * in, when the next period starts, and the one state transition (`applyQuotaSpend`) that
 * the memory store runs directly and the Redis script and PostgreSQL function repeat.
 *
 * Periods: `'daily'` is the UTC day (`floor(ms / 86 400 000)`), `'monthly'` the calendar
 * month in UTC (`(year − 1970) · 12 + month`), N seconds counts whole N-second steps since
 * `setAt`. A refill happens on the first spend in a later period than the stored one.
 * @module
 */
import type { Quota, QuotaInterval, QuotaSpend, QuotaStoreResult } from './types.ts';

/**
 * The quota-store key of an owner's quota: `owner:<ownerId>`. Key ids never hold a colon,
 * so it never names a key's count.
 *
 * @example
 * ```ts
 * ownerQuotaKey('cus_42'); // 'owner:cus_42'
 * ```
 */
export function ownerQuotaKey(ownerId: string): string {
  return `owner:${ownerId}`;
}

/** Largest credit count or refill amount: far below 2^53, exact in doubles, Lua and bigint. */
export const MAX_QUOTA_CREDITS = 1e15;
/** Largest cost of one request. */
export const MAX_QUOTA_COST = 1_000_000;
/** Longest N-second interval: one year. */
const MAX_INTERVAL_SECONDS = 366 * 86_400;
const DAY_MS = 86_400_000;

function isCredits(value: unknown, min: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= MAX_QUOTA_CREDITS;
}

/**
 * Why `interval` is not a valid refill interval, or `undefined`.
 *
 * @example
 * ```ts
 * quotaIntervalProblem('weekly'); // "interval must be 'daily', 'monthly' or a whole number of seconds …"
 * ```
 */
export function quotaIntervalProblem(interval: unknown): string | undefined {
  if (interval === 'daily' || interval === 'monthly') return undefined;
  if (Number.isSafeInteger(interval) && (interval as number) >= 1 && (interval as number) <= MAX_INTERVAL_SECONDS) return undefined;
  return `interval must be 'daily', 'monthly' or a whole number of seconds from 1 to ${MAX_INTERVAL_SECONDS}, got ${JSON.stringify(interval)}`;
}

/**
 * Why `quota` (without `setAt`) is not a valid quota, or `undefined`.
 *
 * @example
 * ```ts
 * quotaProblem({ remaining: 1000, refill: { amount: 1000, interval: 'monthly' } }); // undefined
 * ```
 */
export function quotaProblem(quota: unknown): string | undefined {
  if (typeof quota !== 'object' || quota === null) return 'a quota must be an object { remaining, refill? }';
  const { remaining, refill, mode } = quota as Record<string, unknown>;
  if (!isCredits(remaining, 0)) return `remaining must be an integer from 0 to ${MAX_QUOTA_CREDITS}, got ${String(remaining)}`;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'observe') return `mode must be 'enforce' or 'observe', got ${JSON.stringify(mode)}`;
  if (refill === undefined || refill === null) return undefined;
  if (typeof refill !== 'object') return 'refill must be an object { amount, interval } or null';
  const { amount, interval } = refill as Record<string, unknown>;
  if (!isCredits(amount, 1)) return `refill.amount must be an integer from 1 to ${MAX_QUOTA_CREDITS}, got ${String(amount)}`;
  const why = quotaIntervalProblem(interval);
  return why === undefined ? undefined : `refill.${why}`;
}

/**
 * Index of the refill period that `at` (epoch ms) falls in, for a quota set at `setAt`.
 *
 * @example
 * ```ts
 * quotaPeriod('monthly', Date.UTC(2026, 0, 31), 0); // 672 (January 2026)
 * ```
 */
export function quotaPeriod(interval: QuotaInterval, at: number, setAt: number): number {
  if (interval === 'daily') return Math.floor(at / DAY_MS);
  if (interval === 'monthly') {
    const date = new Date(at);
    return (date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth();
  }
  return Math.max(0, Math.floor((at - setAt) / (interval * 1000)));
}

/**
 * Epoch ms at which period `period` starts (the inverse of `quotaPeriod`).
 *
 * @example
 * ```ts
 * new Date(quotaPeriodStart('monthly', 673, 0)).toISOString(); // '2026-02-01T00:00:00.000Z'
 * ```
 */
export function quotaPeriodStart(interval: QuotaInterval, period: number, setAt: number): number {
  if (interval === 'daily') return period * DAY_MS;
  if (interval === 'monthly') return Date.UTC(1970 + Math.floor(period / 12), period % 12, 1);
  return setAt + period * interval * 1000;
}

/**
 * The store request for spending `cost` from `quota` at `now` (epoch ms) for `key`.
 *
 * @example
 * ```ts
 * const spend = quotaSpend('key_1', { remaining: 100, refill: null, setAt: new Date() }, 1, Date.now());
 * ```
 */
export function quotaSpend(key: string, quota: Quota, cost: number, now: number): QuotaSpend {
  const setAt = quota.setAt.getTime();
  const { refill } = quota;
  if (refill === null) return { key, generation: setAt, initial: quota.remaining, period: 0, refillAmount: null, cost };
  const period = quotaPeriod(refill.interval, now, setAt);
  // First spend of this generation in a later period than the one it was set in: a
  // refill is already due, so the count starts from the refill amount.
  const initial = period > quotaPeriod(refill.interval, setAt, setAt) ? refill.amount : quota.remaining;
  return { key, generation: setAt, initial, period, refillAmount: refill.amount, cost };
}

/** The state a quota store keeps per key. */
export interface QuotaState {
  generation: number;
  period: number;
  remaining: number;
}

/**
 * The one state transition of every quota store: start or restart the count for a newer
 * generation, refill when a later period has begun, then spend `cost` if it fits.
 * A request carrying an older generation (a stale cached key) never resets the count.
 *
 * @example
 * ```ts
 * const { state, result } = applyQuotaSpend(undefined, { key: 'k', generation: 1, initial: 5, period: 0, refillAmount: null, cost: 2 });
 * // result: { allowed: true, remaining: 3 }
 * ```
 */
export function applyQuotaSpend(
  stored: QuotaState | undefined,
  spend: QuotaSpend,
): { state: QuotaState; result: QuotaStoreResult } {
  let state: QuotaState;
  if (stored === undefined || stored.generation < spend.generation) {
    state = { generation: spend.generation, period: spend.period, remaining: spend.initial };
  } else if (stored.generation === spend.generation && spend.refillAmount !== null && spend.period > stored.period) {
    state = { generation: stored.generation, period: spend.period, remaining: spend.refillAmount };
  } else {
    state = { ...stored };
  }
  const allowed = spend.cost <= state.remaining;
  if (allowed) state.remaining -= spend.cost;
  return { state, result: { allowed, remaining: state.remaining } };
}

/**
 * `applyQuotaSpend` for several counts decided together, all-or-nothing (what
 * `QuotaStore.spendAll` does): each count is started or refilled as due, then every cost
 * is spent if each count covers its own, else none is. `stored[i]` belongs to `spends[i]`.
 *
 * @example
 * ```ts
 * const { states, results } = applyQuotaSpends([keyState, ownerState], [keySpend, ownerSpend]);
 * // results[1].allowed === false: the owner's count is short, and nothing was spent
 * ```
 */
export function applyQuotaSpends(
  stored: readonly (QuotaState | undefined)[],
  spends: readonly QuotaSpend[],
): { states: QuotaState[]; results: QuotaStoreResult[] } {
  // Cost 0 applies the start or refill and spends nothing: the counts as they stand now.
  const states = spends.map((spend, i) => applyQuotaSpend(stored[i], { ...spend, cost: 0 }).state);
  const covers = spends.map((spend, i) => spend.cost <= (states[i] as QuotaState).remaining);
  if (covers.every(Boolean)) spends.forEach((spend, i) => ((states[i] as QuotaState).remaining -= spend.cost));
  return { states, results: states.map((state, i) => ({ allowed: covers[i] as boolean, remaining: state.remaining })) };
}
