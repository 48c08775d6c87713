/**
 * A route's side of the guard: what an endpoint requires and costs (`apiKeyCheckOptions`,
 * built once per route), and what the limiter is told for a key on that route.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { MAX_QUOTA_COST } from '../quota/quota-period.ts';
import type { RateLimitCheckOptions, RateLimitPolicy } from '../rate-limit/types.ts';
import type { VerifiedKey } from '../keys/key-record.ts';
import { permissionQuery, type PermissionQuery } from './permission-query.ts';
import { isValidScope } from '../keys/scopes.ts';

/** What an endpoint requires and costs. Build it once per route: it is passed as is on every request. */
export interface ApiKeyGuardCheckOptions {
  /** Scopes the endpoint requires; all must be granted (the `and` shorthand of `permissions`). */
  scopes?: readonly string[];
  /**
   * A permission query the endpoint requires beside `scopes`: `and`/`or` over permissions,
   * e.g. `{ or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] }`.
   */
  permissions?: PermissionQuery;
  /**
   * Credits a request to this endpoint spends from the key's quota and from its owner's
   * (keys without either spend nothing). An integer from 0 (free) to 1,000,000.
   * @default 1
   */
  cost?: number;
  /** The route's name for the limiter's `onDecision` events, e.g. `GET /api/orders`. */
  route?: string;
}

/** The key's policies as the limiter takes them: one policy alone (the cheap path), a list, or the default. */
export function keyPolicies(key: VerifiedKey): RateLimitPolicy | readonly RateLimitPolicy[] | undefined {
  const list = key.rateLimits;
  if (list === null || list === undefined) return key.rateLimit ?? undefined;
  return list.length === 1 ? list[0] : list;
}

/** Per-request limiter options: the key's quota, environment and owner (its limits decided with the key's), the route's cost and name. */
export function limiterOptions(key: VerifiedKey, options: ApiKeyGuardCheckOptions): RateLimitCheckOptions {
  const out: RateLimitCheckOptions = { quota: key.quota ?? null, environment: key.environment };
  // A key with no owner adds nothing here: one property read. An owner goes with every key
  // it has, limits or not: its id places the key's quota count (a Redis Cluster slot).
  const owner = key.owner;
  if (owner !== null && owner !== undefined) out.owner = owner;
  const { cost, route } = options;
  if (cost !== undefined) out.cost = cost;
  if (route !== undefined) out.route = route;
  return out;
}

/**
 * Validates what an adapter's `apiKey({ scopes, permissions, cost, route })` was given and returns the
 * frozen per-route options to pass to `guard.check` on every request (built once, so the
 * request path allocates nothing for them). Throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const checkOptions = apiKeyCheckOptions({ scopes: ['reports:read'], cost: 10, route: 'GET /api/reports' });
 * ```
 */
export function apiKeyCheckOptions(options: ApiKeyGuardCheckOptions): ApiKeyGuardCheckOptions {
  const { scopes = [], permissions, cost, route } = options;
  if (!Array.isArray(scopes) || !scopes.every(isValidScope)) {
    throw new ConfigError(`apiKey() scopes must be scope tokens such as 'orders:read', got ${JSON.stringify(scopes)}`);
  }
  if (cost !== undefined && (!Number.isSafeInteger(cost) || cost < 0 || cost > MAX_QUOTA_COST)) {
    throw new ConfigError(`apiKey() cost must be an integer from 0 to ${MAX_QUOTA_COST} (credits a request spends from the key's quota), got ${String(cost)}`);
  }
  if (route !== undefined && (typeof route !== 'string' || route.length === 0 || route.length > 200)) {
    throw new ConfigError(`apiKey() route must be a name of 1-200 characters such as 'GET /api/orders', got ${JSON.stringify(route)}`);
  }
  const out: ApiKeyGuardCheckOptions = { scopes: Object.freeze([...scopes]) };
  if (permissions !== undefined) out.permissions = permissionQuery(permissions);
  if (cost !== undefined) out.cost = cost;
  if (route !== undefined) out.route = route;
  return Object.freeze(out);
}
