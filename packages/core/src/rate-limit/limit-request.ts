/**
 * One request as the limiter's three parts see it (rate limits, quotas, usage events):
 * built once per `check` from its arguments and passed whole, so no step takes a row of
 * positional parameters that must be kept in order.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { MAX_QUOTA_COST } from '../quota/quota-period.ts';
import type { Quota } from '../quota/types.ts';
import type { RateLimitCheckOptions, RateLimitPolicy } from './types.ts';

/** Internal: not exported from the package. */
export interface LimitRequest {
  /** The identity id counted (never key text). */
  readonly key: string;
  /** The key's own policies; `null`/`undefined`: the limiter's default. */
  readonly policies: RateLimitPolicy | readonly RateLimitPolicy[] | null | undefined;
  /** Credits the request spends from its quotas (rate limits count requests, whatever their cost). */
  readonly cost: number;
  /** The key's quota, `null` without one. */
  readonly quota: Quota | null;
  /** The key's owner, `null` without one. */
  readonly owner: NonNullable<RateLimitCheckOptions['owner']> | null;
  /** For usage events: the route and the key's environment. */
  readonly route: string | undefined;
  readonly environment: string | undefined;
  /** Set when the request is refused anyway (scopes, in-flight cap): counted, no credit spent. */
  readonly refusal: RateLimitCheckOptions['refusal'];
  /** An observed in-flight cap the guard found full: the request would be refused there. */
  readonly wouldRefuse: RateLimitCheckOptions['wouldRefuse'];
}

/** The request `RateLimiter.check(key, policies, options)` describes; `ConfigError` for a key or cost that is not one. */
export function limitRequest(key: string, policies: LimitRequest['policies'], options: RateLimitCheckOptions | undefined): LimitRequest {
  if (typeof key !== 'string') throw new ConfigError(`A rate-limit key must be a string, got ${typeof key}`);
  const cost = options?.cost ?? 1;
  if (!Number.isSafeInteger(cost) || cost < 0 || cost > MAX_QUOTA_COST) {
    throw new ConfigError(`cost must be an integer from 0 to ${MAX_QUOTA_COST}, got ${String(cost)}`);
  }
  return {
    key,
    policies,
    cost,
    quota: options?.quota ?? null,
    owner: options?.owner ?? null,
    route: options?.route,
    environment: options?.environment,
    refusal: options?.refusal,
    wouldRefuse: options?.wouldRefuse,
  };
}

/** Whether `request` has a quota to spend from: its key's, or its owner's. */
export function spendsQuota(request: LimitRequest): boolean {
  return request.quota !== null || (request.owner?.quota ?? null) !== null;
}
