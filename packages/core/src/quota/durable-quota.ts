/**
 * Durable quota counts: a fast quota store (Redis) keeps the live count, and a durable one
 * (PostgreSQL) holds what was spent, written from the fast store every flush interval. If
 * the fast store loses its data (a restart without persistence, a failover to a replica
 * that is behind), its count is rebuilt from the durable one, so at most what was spent
 * since the last flush is lost, never the whole period.
 *
 * Both stores only ever move a key's state forward in one order, the order every
 * `applyQuotaSpend` follows: a newer generation, then a later refill period, then fewer
 * credits left. Merging two states is taking the later one, so flushes from any number of
 * instances, in any order, never hand credits back.
 * @module
 */
import type { QuotaState } from './quota-period.ts';

/** One key's state, as a fast store hands it to the durable one. */
export interface DurableQuotaEntry {
  key: string;
  state: QuotaState;
}

/**
 * Where spent quota is kept for good (`createPostgresQuotaStore` is one). Every write is a
 * merge: the stored state becomes the later of what it was and what is written.
 */
export interface DurableQuotaStore {
  /** The durable state of `key`, or `undefined` when none was ever written. */
  load(key: string): Promise<QuotaState | undefined>;
  /**
   * Merges each entry into the stored state (keys are distinct). Resolves, in the entries'
   * order, with the durable state after the merge: when it is later than the entry, the
   * fast store lost spending and should be raised to it.
   */
  save(entries: readonly DurableQuotaEntry[]): Promise<QuotaState[]>;
}

/**
 * Whether `a` is strictly further along than `b`: a newer generation, else a later
 * period, else fewer credits left.
 *
 * @example
 * ```ts
 * isLaterQuotaState({ generation: 1, period: 0, remaining: 3 }, { generation: 1, period: 0, remaining: 5 }); // true
 * ```
 */
export function isLaterQuotaState(a: QuotaState, b: QuotaState): boolean {
  if (a.generation !== b.generation) return a.generation > b.generation;
  if (a.period !== b.period) return a.period > b.period;
  return a.remaining < b.remaining;
}

/**
 * The later of two states (`undefined` is earlier than any state): what a merge keeps.
 *
 * @example
 * ```ts
 * laterQuotaState(fromRedis, fromPostgres); // the one with less left to spend
 * ```
 */
export function laterQuotaState(a: QuotaState | undefined, b: QuotaState | undefined): QuotaState | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return isLaterQuotaState(b, a) ? b : a;
}
