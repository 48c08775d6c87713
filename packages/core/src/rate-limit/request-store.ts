/**
 * The optional capability of a shared store to decide a whole request in one step: the
 * in-flight leases of a key and its owner, every rate-limit pair of both, and both quotas,
 * all or nothing, as the guard decides them one after another against separate stores.
 * A store that offers it (`@keyset/redis`'s `createRedisRequestStore`) is passed as the
 * limiter's `store` (and its `quotaStore`, and the in-flight limit's `store`); the limiter
 * branches on `decideRequest` being there, never on a name. The leases a request claims
 * (`LeaseClaim`) are defined with the in-flight store, in `concurrency/types.ts`. Stores without it keep the
 * step-by-step path, with the same outcomes.
 * @module
 */
import type { ConcurrencyStore, LeaseClaim } from '../concurrency/types.ts';
import type { QuotaSpend, QuotaStore, QuotaStoreResult } from '../quota/types.ts';
import type { RateLimitDecision, RateLimitRequest, RateLimitStore } from './types.ts';

/** What `decideRequest` decides. */
export interface RequestDecisionInput {
  /** The rate-limit pairs (the key's and its owner's), one request each. */
  readonly limits: readonly RateLimitRequest[];
  /** The quota spends (the key's and its owner's), spent together. */
  readonly quotas: readonly QuotaSpend[];
  /** The leases (the key's, then its owner's), taken together. */
  readonly leases: readonly LeaseClaim[];
}

/**
 * What `decideRequest` answers. In order, as the guard decides step by step: the limits
 * refuse (nothing spent); else they count, and a lease refused takes no lease and spends
 * no quota; else the quotas refuse (no lease taken, the limits counted); else everything
 * is taken and spent.
 *
 * Observed (shadow) limits, at each step after the enforced ones admit, as they would
 * decide if enforced: observed rate-limit pairs advance only when they all admit
 * (`evaluateGcra`); an observed lease or quota is decided only while no observed limit
 * before it would refuse, is taken or spent only when its group admits, and never refuses.
 */
export interface RequestDecisionOutput {
  /** One decision per pair of `limits`, in order. */
  readonly limits: RateLimitDecision[];
  /** Index in `leases` of the (enforced) lease that was refused, or -1. */
  readonly leaseRefused: number;
  /**
   * Index in `leases` of an observed lease (`LeaseClaim.observe`) at its cap, or -1
   * (absent: -1). It never refuses; the request would be refused there, so no observed
   * lease is taken and no observed quota spent.
   */
  readonly observedLease?: number;
  /** One answer per quota spend, or `undefined` when the quotas were not reached. */
  readonly quotas: QuotaStoreResult[] | undefined;
  /**
   * Whether the observed quotas (`QuotaSpend.observe`) were decided, all-or-nothing among
   * themselves after the enforced ones covered the cost (absent: not decided). They are
   * not when an observed rate limit or lease would already refuse the request.
   */
  readonly observedQuotas?: boolean;
  /**
   * The store's clock when it decided (µs since the epoch) and each pair's theoretical
   * arrival time before the decision (µs, 0 when none): with them a limiter can tell,
   * without asking again, until when a refused key stays refused.
   */
  readonly nowMicros: number;
  readonly tats: readonly number[];
}

/**
 * A store that holds rate limits, quotas and leases together and decides a request's in
 * one step. `releaseLeases` gives back the leases of one request, in one step.
 */
export interface RequestStore extends RateLimitStore, QuotaStore, ConcurrencyStore {
  decideRequest(input: RequestDecisionInput): RequestDecisionOutput | Promise<RequestDecisionOutput>;
  releaseLeases(leases: readonly LeaseClaim[]): void | Promise<void>;
}

/** Whether `store` offers the one-step decision. */
export function isRequestStore(store: unknown): store is RequestStore {
  return typeof (store as Partial<RequestStore> | undefined)?.decideRequest === 'function' && typeof (store as Partial<RequestStore>).releaseLeases === 'function';
}
