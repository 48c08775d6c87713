/**
 * The limiter the API-key guard calls: one decision per request against a store, turned
 * into response headers or a 429 problem, then the key's quota. What happens while the
 * store fails (`onStoreError`) is `store-decider.ts`.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
import { withMaybeSync } from '../maybe-promise.ts';
import { createMemoryQuotaStore } from '../quota/memory-quota-store.ts';
import { MAX_QUOTA_COST, ownerQuotaKey, quotaProblem } from '../quota/quota-period.ts';
import { createQuotaSpender, type QuotaEntry, type SpentQuota } from '../quota/quota-spender.ts';
import type { Quota, QuotaDecision, QuotaStore } from '../quota/types.ts';
import { containedHook, type DecisionEvent, type DecisionHook, type DecisionOutcome } from './decision-event.ts';
import { rateLimitPolicyProblem } from './gcra.ts';
import { createStoreDecider, type StoreErrorMode } from './store-decider.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { closestToExhaustion, headerFormats, rateLimitHeaders, type RateLimitHeaderFormat } from './rate-limit-headers.ts';
import type {
  RateLimitCheckOptions,
  RateLimitCheckResult,
  RateLimitDecision,
  RateLimitLogger,
  RateLimitPolicy,
  RateLimitRequest,
  RateLimitStore,
  RateLimiter,
} from './types.ts';
import { consoleWarnLogger } from '../internal/console-warn.ts';

export type { StoreErrorMode } from './store-decider.ts';

// The logger's shape lives in types.ts, where decision-event.ts reads it too (no circle).
export type { RateLimitLogger } from './types.ts';

/** Options of `createRateLimiter`. */
export interface RateLimiterOptions {
  /**
   * Where GCRA state lives.
   * @default createMemoryRateLimitStore({ clock })
   */
  store?: RateLimitStore;
  /**
   * Policy, or several named policies decided together (e.g. `10/s` and `10,000/day`),
   * for keys without their own.
   */
  defaultPolicy: RateLimitPolicy | readonly RateLimitPolicy[];
  /**
   * Where usage-quota counts live (only keys and owners with a `quota` use it; an owner's
   * quota needs a store with `spendAll`, as the memory, Redis and PostgreSQL stores have).
   * @default createMemoryQuotaStore()
   */
  quotaStore?: QuotaStore;
  /**
   * Header format(s) to send: `'draft-11'`, `'draft-7'`, `'legacy'` (`X-RateLimit-*`), or a
   * list such as `['draft-7', 'legacy']` (see `rateLimitHeaders`).
   * @default 'draft-11'
   */
  headers?: RateLimitHeaderFormat | readonly RateLimitHeaderFormat[];
  /**
   * Called once per decision (allowed or refused) with who, where, what and how much, for
   * usage counting and analytics. Never awaited; a throwing, rejecting or never-settling
   * hook cannot affect the request. See `DecisionEvent`.
   */
  onDecision?: DecisionHook;
  /**
   * While the store fails: `'open'` admits every request (and logs), `'closed'` refuses
   * with 503 `unavailable`, `'local'` decides with an in-process memory store that lives
   * as long as the limiter and also counts what the store admitted through this instance,
   * so an outage never hands out a fresh burst (each instance then enforces the limit on
   * its own).
   * @default 'local'
   */
  onStoreError?: StoreErrorMode;
  /**
   * How long an asynchronous store may stay **silent** before a waiting decision counts
   * as failed: the clock restarts whenever the store answers any decision, so a loaded
   * store whose answers keep coming never times out (a decision still gives up after
   * 5 × `timeoutMs` in all). Synchronous stores (the memory store) are never timed.
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * After a failure, how long to use the fallback before asking the store again
   * (one probe request at a time), so an outage costs one timeout, not one per request.
   * @default 1000
   */
  retryIntervalMs?: number;
  /**
   * Time source (epoch ms) for the default and fallback memory stores and the retry interval.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Receives outage transitions and ignored per-key policies (never key text: keys
   * given to `check` are identity ids).
   * @default console
   */
  logger?: RateLimitLogger;
}

/** Every name `RateLimiterOptions` knows, checked when the limiter is made. */
const LIMITER_OPTIONS = {
  store: true,
  defaultPolicy: { limit: true, windowSeconds: true, burst: true, name: true },
  quotaStore: true,
  headers: true,
  onDecision: true,
  onStoreError: true,
  timeoutMs: true,
  retryIntervalMs: true,
  clock: true,
  logger: true,
} as const satisfies KnownOptions<RateLimiterOptions>;

/** A limiter that also exposes how it is doing. */
export interface RateLimiterWithState extends RateLimiter {
  /** `'up'` while the store answers, else the failure mode in effect. */
  readonly storeState: 'up' | StoreErrorMode;
  /** The default policies, in order (`defaultPolicy` is the first). */
  readonly defaultPolicies: readonly RateLimitPolicy[];
  /**
   * Reads a key's quota (spends nothing, refills if due): credits left and next refill.
   * Pass the key's `ownerId` when it has one (its count lives in the owner's Cluster
   * partition). Rejects with `unavailable` when the quota store fails.
   */
  readQuota(key: string, quota: Quota, ownerId?: string | null): Promise<QuotaDecision>;
  /** Reads an owner's quota (spends nothing, refills if due), as `readQuota` does a key's. */
  readOwnerQuota(ownerId: string, quota: Quota): Promise<QuotaDecision>;
}

/**
 * Creates a rate limiter. Policies are validated now (ConfigError). A per-key policy
 * passed to `check` that is invalid (e.g. `limit: 0` stored in a database row) is
 * ignored in favour of `defaultPolicy` and logged once: a bad row must neither lock
 * a client out nor turn into a 500.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 } });
 * const { headers } = await limiter.check(verifiedKey.id, verifiedKey.rateLimit ?? undefined);
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiterWithState {
  assertKnownOptions('createRateLimiter', options, LIMITER_OPTIONS);
  const {
    defaultPolicy,
    onStoreError = 'local',
    timeoutMs = 1000,
    retryIntervalMs = 1000,
    clock = systemClock,
    logger = consoleWarnLogger,
  } = options;
  if (defaultPolicy === undefined) throw new ConfigError('createRateLimiter needs a defaultPolicy { limit, windowSeconds }');
  const problem = policiesProblem(defaultPolicy);
  if (problem !== undefined) throw new ConfigError(`defaultPolicy is invalid: ${problem}`);
  const defaults: readonly RateLimitPolicy[] = Object.freeze(
    (Array.isArray(defaultPolicy) ? defaultPolicy : [defaultPolicy]).map((p: RateLimitPolicy) => Object.freeze({ ...p })),
  );
  const policy = defaults[0] as RateLimitPolicy;
  // Validates onStoreError, timeoutMs, retryIntervalMs and the store.
  const stores = createStoreDecider({ store: options.store, onStoreError, timeoutMs, retryIntervalMs, clock, logger });
  const formats = headerFormats(options.headers);
  const headerOptions = formats.draft11 && !formats.legacy ? undefined : { headers: formats };
  const { onDecision } = options;
  if (onDecision !== undefined && typeof onDecision !== 'function') throw new ConfigError('onDecision must be a function');
  const emit = onDecision === undefined ? undefined : containedHook(onDecision, logger, clock);
  const quotas = createQuotaSpender({
    store: options.quotaStore ?? createMemoryQuotaStore(),
    clock,
    timeoutMs,
    failOpen: onStoreError === 'open',
    retryAfterSeconds: Math.max(1, Math.ceil(retryIntervalMs / 1000)),
    warn: (details, message) => logger.warn(details, message),
  });

  const reported = new WeakSet<object>();
  const validLists = new WeakSet<object>();

  function resolvePolicies(
    key: string,
    candidate: RateLimitPolicy | readonly RateLimitPolicy[] | undefined | null,
  ): RateLimitPolicy | readonly RateLimitPolicy[] {
    if (candidate === undefined || candidate === null) return defaults.length === 1 ? policy : defaults;
    // A frozen list (a cached VerifiedKey's) is checked once, not on every request.
    if (validLists.has(candidate)) return candidate as readonly RateLimitPolicy[];
    const why = Array.isArray(candidate) ? (candidate.length === 0 ? 'no policy' : policiesProblem(candidate)) : rateLimitPolicyProblem(candidate);
    if (why === undefined) {
      if (Array.isArray(candidate) && Object.isFrozen(candidate) && candidate.every((p: RateLimitPolicy) => Object.isFrozen(p))) validLists.add(candidate);
      return candidate as RateLimitPolicy | readonly RateLimitPolicy[];
    }
    if (typeof candidate === 'object' && !reported.has(candidate)) {
      reported.add(candidate);
      logger.warn({ key, problem: why }, 'ignoring an invalid per-key rate-limit policy; using the default policy');
    }
    return defaults.length === 1 ? policy : defaults;
  }

  // An owner's policies renamed `owner.<name>`, per (frozen) list of a cached VerifiedOwner.
  const ownerLists = new WeakMap<object, readonly RateLimitPolicy[] | null>();

  /** The owner's policies as `owner.<name>`, or `undefined` when it has none (or only invalid ones, logged once). */
  function ownerPoliciesOf(owner: { readonly id: string; readonly rateLimits: readonly RateLimitPolicy[] | null }): readonly RateLimitPolicy[] | undefined {
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

  /**
   * The key's pairs and the owner's, for one all-or-nothing decision. Every pair is put in
   * the owner's partition, so a sharded store (Redis Cluster) keeps them in one slot.
   */
  function withOwner(key: string, keyPolicies: RateLimitPolicy | readonly RateLimitPolicy[], ownerId: string, ownerPolicies: readonly RateLimitPolicy[]): RateLimitRequest[] {
    const partition = `owner:${ownerId}`;
    const own = Array.isArray(keyPolicies) ? keyPolicies : [keyPolicies as RateLimitPolicy];
    return [...own.map((policy: RateLimitPolicy) => ({ key, policy, partition })), ...ownerPolicies.map((policy) => ({ key: partition, policy }))];
  }

  function usableQuota(key: string, quota: Quota): Quota {
    const why = quotaProblem(quota) ?? (quota.setAt instanceof Date && Number.isFinite(quota.setAt.getTime()) ? undefined : 'setAt must be a valid Date');
    if (why === undefined) return quota;
    // Credits are a budget: an unreadable quota neither waves the key through nor spends
    // from someone else's count. 503, logged once per quota object.
    if (!reported.has(quota)) {
      reported.add(quota);
      logger.warn({ key, problem: why }, 'refusing a request whose key has an invalid quota');
    }
    throw new KeysetError('unavailable', { detail: 'Usage quotas are temporarily unavailable; retry shortly.' });
  }

  function event(
    key: string,
    outcome: DecisionOutcome,
    decision: RateLimitDecision | undefined,
    cost: number,
    checkOptions: RateLimitCheckOptions | undefined,
    quota?: SpentQuota,
    ownerQuota?: SpentQuota,
  ): DecisionEvent {
    const out: DecisionEvent = {
      keyId: key,
      outcome,
      policy:
        outcome === 'quota_exhausted'
          ? quota !== undefined && !quota.allowed
            ? 'quota'
            : 'owner.quota'
          : (decision?.policy.name ?? (decision === undefined ? '' : 'default')),
      cost,
      remaining: decision?.remaining ?? 0,
    };
    if (checkOptions?.environment !== undefined) out.environment = checkOptions.environment;
    if (checkOptions?.route !== undefined) out.route = checkOptions.route;
    if (quota !== undefined && quota.degraded === undefined) out.quotaRemaining = quota.remaining;
    if (ownerQuota !== undefined && ownerQuota.degraded === undefined) out.ownerQuotaRemaining = ownerQuota.remaining;
    const degraded = decision?.degraded ?? quota?.degraded ?? ownerQuota?.degraded;
    if (degraded !== undefined) out.degraded = degraded;
    return out;
  }

  /** `check`, answering synchronously when the store does and no quota is spent. */
  function checkMaybeSync(
    key: string,
    keyPolicy?: RateLimitPolicy | readonly RateLimitPolicy[] | null,
    checkOptions?: RateLimitCheckOptions,
  ): RateLimitCheckResult | Promise<RateLimitCheckResult> {
    if (typeof key !== 'string') throw new ConfigError(`A rate-limit key must be a string, got ${typeof key}`);
    const cost = checkOptions?.cost ?? 1;
    if (!Number.isSafeInteger(cost) || cost < 0 || cost > MAX_QUOTA_COST) {
      throw new ConfigError(`cost must be an integer from 0 to ${MAX_QUOTA_COST}, got ${String(cost)}`);
    }
    let decisions: RateLimitDecision[] | Promise<RateLimitDecision[]>;
    try {
      const owner = checkOptions?.owner;
      const ownerPolicies = owner === undefined || owner === null ? undefined : ownerPoliciesOf(owner);
      decisions =
        ownerPolicies === undefined
          ? stores.decide(key, resolvePolicies(key, keyPolicy))
          : stores.decideAll(withOwner(key, resolvePolicies(key, keyPolicy), (owner as { id: string }).id, ownerPolicies));
    } catch (error) {
      emit?.(event(key, 'unavailable', undefined, 0, checkOptions));
      throw error;
    }
    if (Array.isArray(decisions)) return decided(key, decisions, cost, checkOptions);
    return decisions.then(
      (answer) => decided(key, answer, cost, checkOptions),
      (error: unknown) => {
        emit?.(event(key, 'unavailable', undefined, 0, checkOptions));
        throw error;
      },
    );
  }

  /** After the rate-limit decisions: headers, a 429, or the quota step (a promise only when a quota is spent). */
  function decided(
    key: string,
    decisions: RateLimitDecision[],
    cost: number,
    checkOptions: RateLimitCheckOptions | undefined,
  ): RateLimitCheckResult | Promise<RateLimitCheckResult> {
    const decision = decisions.length === 1 ? (decisions[0] as RateLimitDecision) : closestToExhaustion(decisions);
    // Fail-open admits without knowing the counts: send no numbers rather than made-up ones.
    const headers =
      decision.degraded === 'open'
        ? {}
        : rateLimitHeaders(decisions.length === 1 ? decision : decisions, headerOptions === undefined ? undefined : { ...headerOptions, now: clock() });
    if (!decision.allowed) {
      emit?.(event(key, 'rate_limited', decision, 0, checkOptions));
      throw new KeysetError('rate_limited', {
        detail: `Rate limit exceeded; retry in ${headers['retry-after'] ?? '1'} s.`,
        headers,
        extensions: { retry_after: Number(headers['retry-after'] ?? '1') },
      });
    }
    // The quota is spent only once the rate limits admitted the request (a request they
    // refuse spends no credit), and not for a request refused for its scopes.
    const quota = checkOptions?.quota ?? null;
    const owner = checkOptions?.owner ?? null;
    const ownerQuota = owner?.quota ?? null;
    const refused = checkOptions?.refusal;
    if ((quota === null && ownerQuota === null) || refused !== undefined) {
      emit?.(event(key, refused ?? 'allowed', decision, 0, checkOptions));
      return { decision, decisions, headers };
    }
    return spendQuota(key, quota, owner === null ? null : { id: owner.id, quota: ownerQuota }, cost, decision, decisions, headers, checkOptions);
  }

  /**
   * The quotas a request spends: its key's (inside the owner's Cluster partition when the
   * key has an owner, so the count stays put whether or not the owner has a quota) and its
   * owner's, counted as `owner:<id>`.
   */
  function quotaEntries(key: string, quota: Quota | null, owner: { id: string; quota: Quota | null } | null): QuotaEntry[] {
    const entries: QuotaEntry[] = [];
    if (quota !== null) entries.push(owner === null ? { key, quota: usableQuota(key, quota) } : { key, quota: usableQuota(key, quota), partition: ownerQuotaKey(owner.id) });
    if (owner !== null && owner.quota !== null) entries.push({ key: ownerQuotaKey(owner.id), quota: usableQuota(ownerQuotaKey(owner.id), owner.quota) });
    return entries;
  }

  async function spendQuota(
    key: string,
    quota: Quota | null,
    owner: { id: string; quota: Quota | null } | null,
    cost: number,
    decision: RateLimitDecision,
    decisions: RateLimitDecision[],
    headers: Record<string, string>,
    checkOptions: RateLimitCheckOptions | undefined,
  ): Promise<RateLimitCheckResult> {
    let spent: SpentQuota[];
    try {
      spent = await quotas.spendAll(quotaEntries(key, quota, owner), cost);
    } catch (error) {
      emit?.(event(key, 'unavailable', decision, 0, checkOptions));
      throw isKeysetError(error) ? new KeysetError(error.code, { detail: error.detail, cause: error.cause, headers: { ...headers, ...error.headers } }) : error;
    }
    const keySpent = quota === null ? undefined : spent[0];
    const ownerSpent = owner === null || owner.quota === null ? undefined : spent[spent.length - 1];
    if (!spent.every((s) => s.allowed)) {
      emit?.(event(key, 'quota_exhausted', decision, 0, checkOptions, keySpent, ownerSpent));
      // The key's quota is named when it ran out, else the owner's: which one, how much is
      // left of it, never whose (the owner id) or what any other key spent.
      const short = keySpent !== undefined && !keySpent.allowed ? keySpent : (ownerSpent as SpentQuota);
      const whose = short === keySpent ? 'key' : 'owner';
      // A wait helps only if it helps every quota that refused.
      const refusing = spent.filter((s) => !s.allowed);
      const retryAfter = refusing.some((s) => s.retryAfterSeconds === 0) ? 0 : Math.max(...refusing.map((s) => s.retryAfterSeconds));
      const quotaHeaders: Record<string, string> = { ...headers };
      const extensions: Record<string, unknown> = { quota: whose, quota_remaining: short.remaining, cost };
      if (retryAfter > 0) {
        quotaHeaders['retry-after'] = String(retryAfter);
        extensions.retry_after = retryAfter;
      }
      const what = whose === 'key' ? 'Usage quota exhausted' : "Owner's usage quota (shared by all its keys) exhausted";
      throw new KeysetError('quota_exhausted', {
        detail:
          retryAfter > 0
            ? `${what}: ${short.remaining} credits left, this request costs ${cost}; it refills in ${retryAfter} s.`
            : `${what}: ${short.remaining} credits left, this request costs ${cost}.`,
        headers: quotaHeaders,
        extensions,
      });
    }
    // Credits really spent: none when the quota store failed open (admitted uncounted).
    const spentCost = spent.some((s) => s.degraded !== undefined) ? 0 : cost;
    emit?.(event(key, 'allowed', decision, spentCost, checkOptions, keySpent, ownerSpent));
    const result: RateLimitCheckResult = { decision, decisions, headers };
    if (keySpent !== undefined) result.quota = keySpent;
    if (ownerSpent !== undefined) result.ownerQuota = ownerSpent;
    return result;
  }

  return Object.freeze({
    defaultPolicy: policy,
    defaultPolicies: defaults,
    get storeState(): 'up' | StoreErrorMode {
      return stores.state;
    },
    // Synchronous when the store is and no quota is spent (see maybe-promise.ts).
    check: withMaybeSync(checkMaybeSync),
    async readQuota(key: string, quota: Quota, ownerId?: string | null): Promise<QuotaDecision> {
      if (typeof key !== 'string') throw new ConfigError(`A quota key must be a string, got ${typeof key}`);
      if (ownerId === undefined || ownerId === null) return quotas.spend(key, usableQuota(key, quota), 0);
      if (typeof ownerId !== 'string') throw new ConfigError(`An owner id must be a string, got ${typeof ownerId}`);
      return quotas.spend(key, usableQuota(key, quota), 0, ownerQuotaKey(ownerId));
    },
    async readOwnerQuota(ownerId: string, quota: Quota): Promise<QuotaDecision> {
      if (typeof ownerId !== 'string') throw new ConfigError(`An owner id must be a string, got ${typeof ownerId}`);
      return quotas.spend(ownerQuotaKey(ownerId), usableQuota(ownerQuotaKey(ownerId), quota), 0);
    },
  });
}

/** Why `policies` (one, or a list with distinct names) cannot be decided together, or `undefined`. */
function policiesProblem(policies: RateLimitPolicy | readonly RateLimitPolicy[]): string | undefined {
  if (!Array.isArray(policies)) return rateLimitPolicyProblem(policies);
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
