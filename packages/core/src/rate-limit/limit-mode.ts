/**
 * Shadow mode, shared by rate-limit policies, quotas and in-flight caps: a limit either
 * refuses (`'enforce'`) or only counts what it would refuse (`'observe'`). Its own module,
 * importing nothing, so the rate-limit, quota and in-flight contracts can all name it
 * without importing each other.
 * @module
 */

/** Whether a limit refuses (`'enforce'`) or only counts what it would refuse (`'observe'`, shadow mode). */
export type LimitMode = 'enforce' | 'observe';

/** Why a request under an observed (shadow) limit would have been refused, had the limit been enforced. */
export type WouldRefuseReason = 'rate_limited' | 'quota_exhausted' | 'concurrency_limited';

/**
 * An observed limit that would have refused a request: why, and which (a rate-limit
 * policy's name, `quota`, `owner.quota`, `in_flight`, `owner.in_flight`).
 */
export interface WouldRefusal {
  readonly reason: WouldRefuseReason;
  readonly policy: string;
}
