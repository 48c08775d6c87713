/**
 * Contracts of the rate-limit area, shared by the core limiter, the memory store,
 * `@keyset/redis` and the API-key guard.
 * @module
 */
import type { Quota, QuotaDecision } from '../quota/types.ts';
import type { LeaseClaims } from '../concurrency/types.ts';
import type { LimitMode, WouldRefusal } from './limit-mode.ts';

export type { LimitMode, WouldRefusal, WouldRefuseReason } from './limit-mode.ts';

/** A GCRA policy: `limit` requests per `windowSeconds`, with up to `burst` at once. */
export interface RateLimitPolicy {
  /** Requests allowed per window. Positive integer. */
  limit: number;
  /** Window length in seconds. Positive. */
  windowSeconds: number;
  /**
   * Requests that may arrive at once after a quiet period.
   * @default limit
   */
  burst?: number;
  /**
   * Name shown in the `RateLimit-Policy` / `RateLimit` headers.
   * @default 'default'
   */
  name?: string;
  /**
   * `'observe'` (shadow mode): decided and counted exactly as if enforced, but never
   * refusing: a request it would refuse is served, reported as `would_refuse`, and does
   * not advance it (as an enforced refusal would not), so switching it to `'enforce'`
   * refuses exactly the requests it reported. Not in the response headers.
   * @default 'enforce'
   */
  mode?: LimitMode;
}

/** One (key, policy) pair to decide; several are decided all-or-nothing. */
export interface RateLimitRequest {
  key: string;
  policy: RateLimitPolicy;
  /**
   * Pairs decided together that must live together in a sharded store (a Redis Cluster
   * slot): the limiter sets it to `owner:<ownerId>` on a key's pairs when the key's
   * owner's limits are decided with them. Absent: `key` alone.
   */
  partition?: string;
}

/** The outcome for one (key, policy) pair. */
export interface RateLimitDecision {
  allowed: boolean;
  policy: RateLimitPolicy;
  /** Requests still allowed right now after this one (0 when denied). */
  remaining: number;
  /** Seconds until the bucket is full again (the `t` of the `RateLimit` header). */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterSeconds: number;
  /**
   * Set when the limiter's store failed and the `onStoreError` fallback decided instead:
   * `'local'` (an in-process memory store) or `'open'` (admitted uncounted).
   */
  degraded?: 'local' | 'open';
}

/**
 * Where GCRA state lives. `decide` is all-or-nothing: if any pair is denied, no pair
 * consumes anything. Stores may answer synchronously (memory) or asynchronously (Redis).
 */
export interface RateLimitStore {
  decide(requests: readonly RateLimitRequest[], cost?: number): RateLimitDecision[] | Promise<RateLimitDecision[]>;
  close?(): Promise<void>;
}

/** Per-request options of `RateLimiter.check`. */
export interface RateLimitCheckOptions {
  /** The key's usage quota; `null`/absent = no quota. */
  quota?: Quota | null;
  /**
   * Credits this request spends from `quota` (the route's cost). Rate limits count
   * requests, whatever their cost.
   * @default 1
   */
  cost?: number;
  /** For `onDecision`: the route as the adapter names it. */
  route?: string;
  /** For `onDecision`: the key's environment. */
  environment?: string;
  /**
   * The key's owner: its limits (shown as `owner.<name>` in the headers) are decided in the
   * same all-or-nothing decision as the key's, so no pair spends when one refuses, and its
   * `quota` (counted as `owner:<id>`) is spent together with the key's: both or neither.
   * All the owner's keys share them (`VerifiedKey.owner`). Absent, or no `rateLimits` and
   * no `quota`: the key's alone.
   */
  owner?: { readonly id: string; readonly rateLimits: readonly RateLimitPolicy[] | null; readonly quota?: Quota | null } | null;
  /**
   * The request is refused anyway (a 403 for its scopes, a 429 for its in-flight limit):
   * count it against the rate limits, spend no credit, and report this outcome to `onDecision`.
   */
  refusal?: 'insufficient_scope' | 'concurrency_limited';
  /**
   * An observed in-flight cap the request's leases were at (set by the guard): the request
   * would be refused there, so its observed quotas are not spent, and its usage event is
   * `would_refuse` with this reason unless an observed rate limit would refuse it first.
   */
  wouldRefuse?: WouldRefusal;
}

/** What `RateLimiter.check` resolves with for an admitted request. */
export interface RateLimitCheckResult {
  /** The decision closest to exhaustion (the only one with a single policy). */
  decision: RateLimitDecision;
  /** One decision per policy, in the policies' order. */
  decisions?: readonly RateLimitDecision[];
  /** The quota spend, when the key has a quota. */
  quota?: QuotaDecision;
  /** The owner's quota spend, when the key's owner has a quota. */
  ownerQuota?: QuotaDecision;
  /** Response headers to send (`RateLimit-Policy`, `RateLimit`, … per the `headers` option); observed policies are not in them. */
  headers: Record<string, string>;
  /**
   * Set when an observed (shadow) limit would have refused this admitted request: the
   * first in the order an enforced one refuses (rate limits, in-flight caps, quotas).
   */
  wouldRefuse?: WouldRefusal;
}

/** What the API-key guard needs from a limiter. */
export interface RateLimiter {
  /**
   * Decides one request for `key` under `policy` — one policy or several named ones decided
   * all-or-nothing (the limiter's default when omitted) — then spends `options.cost` from
   * `options.quota` and `options.owner.quota` (both or neither). Resolves with the response headers to send; rejects with a
   * `KeysetError` `rate_limited` (429), `quota_exhausted` (429) or `unavailable` (503).
   */
  check(key: string, policy?: RateLimitPolicy | readonly RateLimitPolicy[] | null, options?: RateLimitCheckOptions): Promise<RateLimitCheckResult>;
  /**
   * Only on a limiter whose store decides a whole request in one call (`RequestStore`):
   * `check`, with the in-flight leases of `claims` taken in the same call (refused: 429
   * `concurrency_limited` with the rate-limit headers, counted against the limits, no
   * credit spent). Resolves `undefined` when the leases are not in that store or the call
   * failed: nothing was decided, and the caller takes the leases and calls `check`.
   */
  checkWithLeases?(
    key: string,
    policy: RateLimitPolicy | readonly RateLimitPolicy[] | null | undefined,
    options: RateLimitCheckOptions | undefined,
    claims: LeaseClaims,
  ): Promise<RateLimitCheckResult | undefined>;
  readonly defaultPolicy: RateLimitPolicy;
}

/** Where the limiter reports store outages and ignored policies. pino and `console` fit. */
export interface RateLimitLogger {
  warn(details: Record<string, unknown>, message: string): void;
}
