/**
 * The `onDecision` hook: one event per limiter decision, for usage counting and analytics
 * (who, where, what happened, how much), built from the request and the facts its decision
 * gathered (`usageEvent`). The hook runs after the decision and can never change it: a
 * hook that throws, rejects or never settles is contained (its promise is not awaited;
 * failures are logged at most once a minute). It runs synchronously on the request's
 * path, so a hook that has real work to do should hand it off (buffer, queue, metrics
 * counter) and return.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { SpentQuota } from '../quota/quota-spender.ts';
import type { WouldRefuseReason } from './limit-mode.ts';
import type { LimitRequest } from './limit-request.ts';
import type { RateLimitDecision, RateLimitLogger, WouldRefusal } from './types.ts';

/**
 * What happened to the request. `would_refuse`: admitted and served, but an observed
 * (shadow) limit would have refused it, for `DecisionEvent.reason`.
 */
export type DecisionOutcome = 'allowed' | 'rate_limited' | 'quota_exhausted' | 'insufficient_scope' | 'concurrency_limited' | 'unavailable' | 'would_refuse';

/** One decision, as `onDecision` receives it. Holds no key text: `keyId` is the identity id. */
export interface DecisionEvent {
  /** Identity id (the same for every secret of a key). */
  keyId: string;
  /** The key's owner, when it has one: per-owner usage totals without a lookup. */
  ownerId?: string;
  /** The key's environment (e.g. `live`, `test`) when the keyring knows one. */
  environment?: string;
  /** The route as the adapter names it (e.g. `GET /api/orders`), when known. */
  route?: string;
  outcome: DecisionOutcome;
  /**
   * With `would_refuse`: what the observed limit would have refused the request with
   * (`rate_limited`, `quota_exhausted`, `concurrency_limited`); `policy` names that limit.
   */
  reason?: WouldRefuseReason;
  /**
   * The policy that decided: the refusing one with the longest wait for `rate_limited`,
   * `'quota'` for `quota_exhausted` by the key's quota (`'owner.quota'` by its owner's),
   * for `would_refuse` the observed limit that would have refused (a policy name, `'quota'`,
   * `'owner.quota'`, `'in_flight'`, `'owner.in_flight'`), else the enforced one closest to
   * exhaustion.
   */
  policy: string;
  /** Credits this request spent from the key's quota, or else its owner's (0 when refused or without a quota). */
  cost: number;
  /** Requests left under `policy` right now. */
  remaining: number;
  /** Credits left in the key's quota, when it has one and the quota store answered. */
  quotaRemaining?: number;
  /** Credits left in the owner's quota, when the key's owner has one and the quota store answered. */
  ownerQuotaRemaining?: number;
  /** Set when a store failed and the `onStoreError` fallback decided. */
  degraded?: 'local' | 'open';
}

/** The hook. A returned promise is not awaited. */
export type DecisionHook = (event: DecisionEvent) => void | Promise<void>;

const REPORT_EVERY_MS = 60_000;

/** Internal: calls `hook` and contains whatever it does. */
export function containedHook(hook: DecisionHook, logger: RateLimitLogger, clock: Clock): (event: DecisionEvent) => void {
  let reportedAt = Number.NEGATIVE_INFINITY;
  let failures = 0;
  const report = (error: unknown): void => {
    failures++;
    const now = clock();
    if (now - reportedAt < REPORT_EVERY_MS) return;
    reportedAt = now;
    try {
      logger.warn({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), failures }, 'onDecision hook failed; the request was not affected');
    } catch {
      // A logger that throws must not fail the request either.
    }
    failures = 0;
  };
  return (event) => {
    try {
      const result = hook(event);
      if (typeof (result as { then?: unknown } | undefined)?.then === 'function') (result as Promise<void>).then(undefined, report);
    } catch (error) {
      report(error);
    }
  };
}

/** Internal: what the decision of a request found out, as far as it went. */
export interface DecisionFacts {
  /** The rate-limit decision closest to exhaustion; absent when the store failed. */
  readonly decision?: RateLimitDecision;
  /** Credits spent. @default 0 */
  readonly cost?: number;
  readonly quota?: SpentQuota | undefined;
  readonly ownerQuota?: SpentQuota | undefined;
  /** For an admitted request: the observed (shadow) limit that would have refused it. */
  readonly wouldRefuse?: WouldRefusal | undefined;
}

/** Internal: the event `onDecision` receives for `request`. Holds no key text: `keyId` is the identity id. */
export function usageEvent(request: LimitRequest, outcome: DecisionOutcome, facts: DecisionFacts): DecisionEvent {
  const { decision, cost = 0, quota, ownerQuota, wouldRefuse } = facts;
  const would = outcome === 'allowed' ? wouldRefuse : undefined;
  const event: DecisionEvent = {
    keyId: request.key,
    outcome: would === undefined ? outcome : 'would_refuse',
    policy:
      would !== undefined
        ? would.policy
        : outcome === 'quota_exhausted'
        ? quota !== undefined && !quota.allowed
          ? 'quota'
          : 'owner.quota'
        : (decision?.policy.name ?? (decision === undefined ? '' : 'default')),
    cost,
    remaining: decision?.remaining ?? 0,
  };
  if (would !== undefined) event.reason = would.reason;
  if (request.owner !== null) event.ownerId = request.owner.id;
  if (request.environment !== undefined) event.environment = request.environment;
  if (request.route !== undefined) event.route = request.route;
  if (quota !== undefined && quota.degraded === undefined) event.quotaRemaining = quota.remaining;
  if (ownerQuota !== undefined && ownerQuota.degraded === undefined) event.ownerQuotaRemaining = ownerQuota.remaining;
  const degraded = decision?.degraded ?? quota?.degraded ?? ownerQuota?.degraded;
  if (degraded !== undefined) event.degraded = degraded;
  return event;
}
