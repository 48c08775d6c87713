/**
 * The limiter's usage events: what `onDecision` hears of one request (who, where, what
 * happened, how much), built from the request and the facts its decision gathered. The
 * hook itself, and how it is kept from affecting the request, is `decision-event.ts`.
 * @module
 */
import type { SpentQuota } from '../quota/quota-spender.ts';
import type { DecisionEvent, DecisionOutcome } from './decision-event.ts';
import type { LimitRequest } from './limit-request.ts';
import type { RateLimitDecision, WouldRefusal } from './types.ts';

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
