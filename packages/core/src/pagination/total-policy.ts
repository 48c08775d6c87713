/**
 * Offset mode's `total`, as a policy per endpoint: `exact` (a count, optionally capped),
 * `estimated` (the database's own guess, e.g. PostgreSQL's planner) or `none`. Core decides
 * which count a source runs and what the envelope says about it; the SQL lives with the
 * source (`@keyset/kysely`, `@keyset/drizzle`, the example app), so core stays
 * database-agnostic.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { PagePlan, TotalPolicy } from './types.ts';

// TotalPolicy is a field of PagePlan, so it lives with the plan in types.ts (which imports
// nothing from here); re-exported for the readers of this module.
export type { TotalPolicy } from './types.ts';

/** The paginator's `total` option: a mode name, or `{ mode: 'exact', cap }`. */
export type TotalOption = 'exact' | 'estimated' | 'none' | { readonly mode: 'exact'; readonly cap?: number } | { readonly mode: 'estimated' | 'none' };

/**
 * A total as a source counted it: `exact`, `estimated` (a guess, possibly far off) or
 * `atLeast` (a capped count: the collection has at least `value` rows). A plain number given
 * to `Paginator.page` is an exact count.
 */
export interface CountedTotal {
  readonly value: number;
  readonly accuracy: 'exact' | 'estimated' | 'atLeast';
}

/** What a source can count, for {@link countTotal}. */
export interface TotalCounters {
  /**
   * Counts the rows matching the query's filters, stopping at `limit` rows when given
   * (`SELECT count(*) FROM (SELECT 1 … LIMIT $limit)`), so a capped count costs at most `limit` rows.
   */
  count(limit?: number): Promise<number> | number;
  /**
   * The database's estimate of the rows matching the filters (e.g. PostgreSQL's planner).
   * @default none: `estimated` endpoints count exactly, and say so
   */
  estimate?: () => Promise<number> | number;
}

const EXACT: TotalPolicy = Object.freeze({ mode: 'exact', cap: null });

/**
 * Validates the paginator's `total` option. Throws `ConfigError` for an unknown mode, a cap
 * on a mode that does not count, or a cap that is not a positive safe integer.
 */
export function resolveTotalPolicy(option: TotalOption | undefined): TotalPolicy {
  if (option === undefined || option === 'exact') return EXACT;
  if (option === 'estimated' || option === 'none') return Object.freeze({ mode: option });
  if (typeof option !== 'object' || option === null) {
    throw new ConfigError(`total must be 'exact', 'estimated', 'none' or { mode: 'exact', cap }, got ${String(option)}`);
  }
  const { mode } = option;
  const cap = (option as { cap?: unknown }).cap;
  if (mode === 'estimated' || mode === 'none') {
    if (cap !== undefined) throw new ConfigError(`total.cap applies to mode 'exact' only (a '${mode}' total counts nothing)`);
    return Object.freeze({ mode });
  }
  if (mode !== 'exact') throw new ConfigError(`total.mode must be 'exact', 'estimated' or 'none', got ${String(mode)}`);
  if (cap === undefined) return EXACT;
  if (typeof cap !== 'number' || !Number.isSafeInteger(cap) || cap < 1) {
    throw new ConfigError(`total.cap must be a positive integer (rows counted before reporting "at least"), got ${String(cap)}`);
  }
  return Object.freeze({ mode: 'exact', cap });
}

/**
 * Runs the count the plan's total policy asks for: nothing in cursor mode or for `none`;
 * `count()` for `exact`; `count(cap + 1)` for a capped `exact` (more than `cap` rows →
 * `{ value: cap, accuracy: 'atLeast' }`); `estimate()` for `estimated` (rounded, never
 * negative). Hand the result to `Paginator.page` as `total`.
 *
 * @example
 * ```ts
 * const total = await countTotal(plan, {
 *   count: (limit) => countOrders(filters, limit),
 *   estimate: () => estimateOrders(filters),
 * });
 * const { body, headers } = await orders.page(plan, rows, total === undefined ? { url } : { url, total });
 * ```
 */
export async function countTotal(plan: PagePlan, counters: TotalCounters): Promise<CountedTotal | undefined> {
  if (plan.mode !== 'offset') return undefined;
  const policy = plan.total ?? EXACT;
  if (policy.mode === 'none') return undefined;
  if (policy.mode === 'estimated' && counters.estimate !== undefined) {
    const guess = Number(await counters.estimate());
    return Object.freeze({ value: Number.isFinite(guess) && guess > 0 ? Math.round(guess) : 0, accuracy: 'estimated' });
  }
  const cap = policy.mode === 'exact' ? policy.cap : null;
  if (cap === null) return Object.freeze({ value: Number(await counters.count()), accuracy: 'exact' });
  const counted = Number(await counters.count(cap + 1));
  return Object.freeze(counted > cap ? { value: cap, accuracy: 'atLeast' } : { value: counted, accuracy: 'exact' });
}

/** The `total` members of an offset page body. */
export interface SettledTotal {
  total: number | null;
  totalEstimated?: true;
  totalAtLeast?: true;
}

/**
 * Reconciles a source's total with what the page itself proves (`Paginator.page` calls it):
 * a page without more rows ends the collection, so the total is exactly `offset + items`;
 * a page with more rows proves at least `offset + items + 1`, so an estimate or a capped
 * count below that is raised to it. An exact count is taken as given.
 */
export function settleTotal(offset: number, itemCount: number, hasMore: boolean, total: number | CountedTotal | undefined): SettledTotal {
  if (total === undefined) return { total: null };
  const counted: CountedTotal = typeof total === 'number' ? { value: total, accuracy: 'exact' } : total;
  if (counted.accuracy === 'exact') return { total: counted.value };
  // The last page: its end is the collection's end (an empty page past the end proves nothing).
  if (!hasMore && (itemCount > 0 || offset === 0)) return { total: offset + itemCount };
  // An empty page past the end proves the collection has at most `offset` rows.
  const value = itemCount === 0 ? (counted.accuracy === 'estimated' ? Math.min(counted.value, offset) : counted.value) : Math.max(counted.value, offset + itemCount + (hasMore ? 1 : 0));
  return counted.accuracy === 'estimated' ? { total: value, totalEstimated: true } : { total: value, totalAtLeast: true };
}
