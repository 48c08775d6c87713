/**
 * Contracts of usage quotas: a budget of credits per key that each request spends by its
 * route's `cost`, optionally refilled on a calendar (daily, monthly, UTC) or every N
 * seconds. Shared by the limiter, the memory store, `@keyset/redis` and `@keyset/postgres`.
 * @module
 */

import type { LimitMode } from '../rate-limit/limit-mode.ts';

/**
 * How often a quota refills: `'daily'` (00:00 UTC every day), `'monthly'` (00:00 UTC on
 * the 1st of every calendar month), or a whole number of seconds counted from the moment
 * the quota was last set.
 */
export type QuotaInterval = 'daily' | 'monthly' | number;

/** A refill: at each interval boundary the remaining credits are SET to `amount` (unused credits do not carry over). */
export interface QuotaRefill {
  /** Credits after a refill. Positive integer. */
  amount: number;
  interval: QuotaInterval;
}

/**
 * A key's quota as the key store holds it. `remaining` is the credit count as set by an
 * administrator at `setAt` (issue or update); the quota store counts spending from there.
 * A newer `setAt` replaces whatever the quota store counted, an older one never does.
 */
export interface Quota {
  /** Credits at `setAt`. Integer from 0 to 10^15. */
  remaining: number;
  /** Refill schedule, or `null` for a one-off budget. */
  refill: QuotaRefill | null;
  /** When `remaining` was set; the "generation" of the count. */
  setAt: Date;
  /**
   * `'observe'` (shadow mode): spent and counted exactly as if enforced, but never
   * refusing: a request it cannot cover is served, reported as `would_refuse`, and spends
   * nothing from it (as an enforced refusal would not). Switching the mode keeps the count.
   * @default 'enforce'
   */
  mode?: LimitMode;
}

/**
 * One atomic spend, as the core hands it to a store. The core works out the refill
 * period from its clock; the store only compares integers, so the memory, Redis and
 * PostgreSQL stores decide identically.
 */
export interface QuotaSpend {
  /** Whose quota: an identity id, or `owner:<ownerId>` for an owner's quota (see `ownerQuotaKey`). */
  key: string;
  /**
   * Counts spent together that must live together in a sharded store (a Redis Cluster
   * slot): the limiter sets it to `owner:<ownerId>` on the quota of a key that has an
   * owner, whether or not the owner has a quota, so the count never moves. Absent: `key`
   * alone. Stores keyed by `key` alone (memory, PostgreSQL) ignore it.
   */
  partition?: string;
  /** `quota.setAt` in epoch ms: a larger generation resets the stored count to `initial`. */
  generation: number;
  /** Credits to start from when the store holds nothing for this generation. */
  initial: number;
  /** Index of the current refill period (0 without a refill). */
  period: number;
  /** Credits a refill sets; `null` without a refill. */
  refillAmount: number | null;
  /** Credits to spend; 0 reads without spending. */
  cost: number;
  /**
   * An observed (shadow) quota, for a store that decides a whole request
   * (`RequestStore.decideRequest`): spent with the other observed ones, apart from the
   * enforced ones. `spend`/`spendAll` ignore it (the limiter calls them per group).
   */
  observe?: boolean;
}

/** What a store answers: whether `cost` was spent, and the credits left afterwards. */
export interface QuotaStoreResult {
  allowed: boolean;
  remaining: number;
}

/**
 * Where quota counts live. `spend` is atomic: refill-if-due, compare and decrement happen
 * as one step, so concurrent requests never spend more than there is.
 */
export interface QuotaStore {
  spend(request: QuotaSpend): QuotaStoreResult | Promise<QuotaStoreResult>;
  /**
   * Several quotas (a key's and its owner's) decided in ONE atomic step, all-or-nothing:
   * each result's `allowed` says whether that quota covers its `cost`, and the costs are
   * spent only when every one does; otherwise none is (refills that fell due still
   * happen). `remaining` is each count afterwards. Keys are distinct. Optional for stores
   * written before owners had quotas: without it, a request that must spend two counts (a
   * key with a quota of its own whose owner has one) is refused with 503 `unavailable`
   * (and logged once), never spent in two steps.
   */
  spendAll?(requests: readonly QuotaSpend[]): QuotaStoreResult[] | Promise<QuotaStoreResult[]>;
  close?(): Promise<void>;
}

/** A quota decision as the limiter reports it. */
export interface QuotaDecision {
  allowed: boolean;
  /** Credits spent by this request (0 when refused). */
  cost: number;
  /** Credits left after this request. */
  remaining: number;
  /** Next refill instant, or `null` without a refill. */
  nextRefillAt: Date | null;
  /** Seconds until the next refill when refused and a refill would cover `cost`; else 0. */
  retryAfterSeconds: number;
}
