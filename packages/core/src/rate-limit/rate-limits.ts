/**
 * The limiter's rate limits, without a store: which pairs a request is decided under (the
 * key's own policies, or the default, and its owner's, named `owner.<name>`), and what the
 * store's decisions of those pairs mean for the response (the decision closest to
 * exhaustion, the headers, the 429). The limiter asks the store (`store-decider.ts`) in
 * between, so this module only turns requests into pairs and decisions into answers.
 * @module
 */
import type { Clock } from '../clock.ts';
import { KeysetError } from '../errors.ts';
import { rateLimitPolicyProblem } from './gcra.ts';
import type { LimitRequest } from './limit-request.ts';
import { closestToExhaustion, rateLimitHeaders, type HeaderFormats } from './rate-limit-headers.ts';
import type { RateLimitDecision, RateLimitLogger, RateLimitPolicy, RateLimitRequest, WouldRefusal } from './types.ts';

/** Internal: what `createRateLimits` takes. */
export interface RateLimitsOptions {
  /** The default policies, validated and frozen. */
  readonly defaults: readonly RateLimitPolicy[];
  readonly formats: HeaderFormats;
  readonly clock: Clock;
  readonly logger: RateLimitLogger;
}

/** Internal: a request's rate-limit decision. */
export interface DecidedLimits {
  /** The decision closest to exhaustion (the only one with a single policy). */
  readonly decision: RateLimitDecision;
  readonly decisions: RateLimitDecision[];
  /** The response headers (none when the store failed open: no made-up numbers). */
  readonly headers: Record<string, string>;
  /**
   * The observed (shadow) policy that would have refused an admitted request (the longest
   * wait among those that would), or `undefined` when none would.
   */
  readonly observed?: RateLimitDecision | undefined;
}

/** Internal: not exported from the package. */
export interface RateLimits {
  /**
   * The pairs to decide for `request`, all-or-nothing: one per policy of the key (its own,
   * or the default), then one per policy of its owner. A key with an owner has its pairs
   * in the owner's partition, so a sharded store (Redis Cluster) keeps them in one slot.
   */
  pairsOf(request: LimitRequest): RateLimitRequest[];
  /** The decision closest to exhaustion and the headers the store's `decisions` (one per pair) give. */
  decided(decisions: RateLimitDecision[]): DecidedLimits;
}

/** Creates the rate-limit part of a limiter. */
export function createRateLimits(options: RateLimitsOptions): RateLimits {
  const { defaults, formats, clock, logger } = options;
  const fallback = defaults.length === 1 ? (defaults[0] as RateLimitPolicy) : defaults;
  const headerOptions = formats.draft11 && !formats.legacy ? undefined : { headers: formats };
  const reported = new WeakSet<object>();
  const validLists = new WeakSet<object>();
  // An owner's policies renamed `owner.<name>`, per (frozen) list of a cached VerifiedOwner.
  const ownerLists = new WeakMap<object, readonly RateLimitPolicy[] | null>();

  /** The key's own policies, or the default when it has none or only invalid ones (logged once: a bad row must neither lock a client out nor turn into a 500). */
  function policiesOrDefault({ key, policies }: LimitRequest): RateLimitPolicy | readonly RateLimitPolicy[] {
    if (policies === undefined || policies === null) return fallback;
    // A frozen list (a cached VerifiedKey's) is checked once, not on every request.
    if (validLists.has(policies)) return policies;
    const why = Array.isArray(policies) ? (policies.length === 0 ? 'no policy' : policiesProblem(policies)) : rateLimitPolicyProblem(policies);
    if (why === undefined) {
      if (Array.isArray(policies) && Object.isFrozen(policies) && policies.every((p: RateLimitPolicy) => Object.isFrozen(p))) validLists.add(policies);
      return policies;
    }
    if (typeof policies === 'object' && !reported.has(policies)) {
      reported.add(policies);
      logger.warn({ key, problem: why }, 'ignoring an invalid per-key rate-limit policy; using the default policy');
    }
    return fallback;
  }

  /** The owner's policies as `owner.<name>`, or `undefined` when it has none (or only invalid ones, logged once). */
  function ownerPoliciesOf(owner: NonNullable<LimitRequest['owner']>): readonly RateLimitPolicy[] | undefined {
    const list = owner.rateLimits;
    if (list === null || list === undefined || list.length === 0) return undefined;
    let named = ownerLists.get(list);
    if (named === undefined) {
      const why = policiesProblem(list);
      if (why !== undefined) logger.warn({ owner: owner.id, problem: why }, "ignoring an owner's invalid rate-limit policies; its keys' own limits still apply");
      named = why !== undefined ? null : Object.freeze(list.map((p) => Object.freeze({ ...p, name: `owner.${p.name ?? 'default'}` })));
      if (Object.isFrozen(list)) ownerLists.set(list, named);
    }
    return named ?? undefined;
  }

  function pairsOf(request: LimitRequest): RateLimitRequest[] {
    const { key, owner } = request;
    if (owner !== null) return ownerPartitionPairs(request, owner);
    const own = policiesOrDefault(request);
    return Array.isArray(own) ? own.map((policy: RateLimitPolicy) => ({ key, policy })) : [{ key, policy: own as RateLimitPolicy }];
  }

  /**
   * A key with an owner keeps its pairs in the owner's partition, owner limits or not, as
   * its quota and its lease do (a store that decides a request in one step then touches
   * one Redis Cluster slot); the owner's pairs come after the key's.
   */
  function ownerPartitionPairs(request: LimitRequest, owner: NonNullable<LimitRequest['owner']>): RateLimitRequest[] {
    const ownerPolicies = ownerPoliciesOf(owner) ?? [];
    const own = policiesOrDefault(request);
    const { key } = request;
    const partition = `owner:${owner.id}`;
    const keyPairs = (Array.isArray(own) ? own : [own as RateLimitPolicy]).map((policy: RateLimitPolicy) => ({ key, policy, partition }));
    return ownerPolicies.length === 0 ? keyPairs : [...keyPairs, ...ownerPolicies.map((policy) => ({ key: partition, policy }))];
  }

  function decided(decisions: RateLimitDecision[]): DecidedLimits {
    // Observed (shadow) policies never refuse and are not the client's business: the
    // decision and the headers are the enforced policies'. A request with only observed
    // policies gets no rate-limit headers.
    const enforced = decisions.some((d) => d.policy.mode === 'observe') ? decisions.filter((d) => d.policy.mode !== 'observe') : decisions;
    const observed = enforced === decisions ? undefined : firstRefusing(decisions);
    const shown = enforced.length === 0 ? decisions : enforced;
    const decision = shown.length === 1 ? (shown[0] as RateLimitDecision) : closestToExhaustion(shown);
    // Fail-open admits without knowing the counts: send no numbers rather than made-up ones.
    const headers =
      decision.degraded === 'open' || enforced.length === 0
        ? {}
        : rateLimitHeaders(enforced.length === 1 ? decision : enforced, headerOptions === undefined ? undefined : { ...headerOptions, now: clock() });
    if (enforced.length === 0 && decision.allowed === false) return { decision: { ...decision, allowed: true }, decisions, headers, observed };
    return observed === undefined ? { decision, decisions, headers } : { decision, decisions, headers, observed };
  }

  return Object.freeze({ pairsOf, decided });
}

/** The 429 for a request its rate limits refused, with their headers and `Retry-After`. */
export function rateLimitedError(headers: Record<string, string>): KeysetError {
  return new KeysetError('rate_limited', {
    detail: `Rate limit exceeded; retry in ${headers['retry-after'] ?? '1'} s.`,
    headers,
    extensions: { retry_after: Number(headers['retry-after'] ?? '1') },
  });
}

/** The observed (shadow) rate limit that would have refused an admitted request, for its usage event. */
export function observedRefusal(limits: DecidedLimits): WouldRefusal | undefined {
  const observed = limits.observed;
  return observed === undefined ? undefined : { reason: 'rate_limited', policy: observed.policy.name ?? 'default' };
}

/** Why `policies` (one, or a list with distinct names) cannot be decided together, or `undefined`. */
export function policiesProblem(policies: RateLimitPolicy | readonly RateLimitPolicy[]): string | undefined {
  if (!Array.isArray(policies)) return rateLimitPolicyProblem(policies as RateLimitPolicy);
  if (policies.length === 0) return 'give at least one policy';
  const names = new Set<string>();
  for (const [i, p] of policies.entries()) {
    const why = rateLimitPolicyProblem(p);
    if (why !== undefined) return `policy ${i}: ${why}`;
    const name = (p as RateLimitPolicy).name ?? 'default';
    if (names.has(name)) return `two policies are named "${name}"; give each its own name`;
    names.add(name);
  }
  return undefined;
}

/** Among the observed decisions of an admitted request, the refusing one with the longest wait. */
function firstRefusing(decisions: readonly RateLimitDecision[]): RateLimitDecision | undefined {
  let found: RateLimitDecision | undefined;
  for (const d of decisions) {
    if (d.policy.mode !== 'observe' || d.allowed) continue;
    if (found === undefined || d.retryAfterSeconds > found.retryAfterSeconds) found = d;
  }
  return found;
}
