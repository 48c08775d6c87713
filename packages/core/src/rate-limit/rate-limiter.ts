/**
 * The limiter the API-key guard calls: one decision per request over one per-request
 * context (`limit-request.ts`). Every call goes one way, from here down:
 *
 * - the rate limits: `rate-limits.ts` names the pairs to decide, the store decider
 *   (`store-decider.ts`, which also answers while the store fails) decides them, and
 *   `rate-limits.ts` turns the decisions into the headers or the 429;
 * - then, once they admit the request, its quotas: `quota/request-quotas.ts` names the
 *   counts to spend from, the spender (`quota/quota-spender.ts`, which also answers while
 *   the quota store fails) spends them, and `quota/request-quotas.ts` says what that did;
 * - a usage event for `onDecision` whatever the outcome (`decision-event.ts`).
 *
 * Neither `rate-limits.ts` nor `quota/request-quotas.ts` touches a store.
 *
 * Over a `RequestStore` (`request-store.ts`) the three parts are one store call, with the
 * guard's leases in it (`checkWithLeases`), and refusals the store gave are remembered
 * (`refusal-memory.ts`); while that call fails, the parts are decided one by one as above.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { createMemoryQuotaStore } from '../quota/memory-quota-store.ts';
import { ownerQuotaKey } from '../quota/quota-period.ts';
import { createQuotaSpender } from '../quota/quota-spender.ts';
import { createRequestQuotas, quotaExhaustedError, type SpentQuotas } from '../quota/request-quotas.ts';
import type { Quota, QuotaDecision, QuotaStore } from '../quota/types.ts';
import { containedHook, usageEvent, type DecisionHook } from './decision-event.ts';
import { limitRequest, spendsQuota, type LimitRequest } from './limit-request.ts';
import { createRateLimits, observedRefusal, policiesProblem, rateLimitedError, type DecidedLimits } from './rate-limits.ts';
import { createStoreDecider, type StoreErrorMode } from './store-decider.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { headerFormats, type RateLimitHeaderFormat } from './rate-limit-headers.ts';
import type { RateLimitCheckOptions, RateLimitCheckResult, RateLimitLogger, RateLimitPolicy, RateLimitStore, RateLimiter, WouldRefusal } from './types.ts';
import { consoleWarnLogger } from '../internal/console-warn.ts';
import { createSilenceWatch } from '../internal/silence-timeout.ts';
import { isRequestStore, type RequestDecisionOutput, type RequestStore } from './request-store.ts';
import { createRefusalMemory, type RecalledRefusal } from './refusal-memory.ts';
import { prepareGcra, evaluateGcra } from './gcra.ts';
import type { LeaseClaim, LeaseClaims } from '../concurrency/types.ts';

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
   * @default `store` when it is a `RequestStore` (it holds quotas too), else createMemoryQuotaStore()
   */
  quotaStore?: QuotaStore;
  /**
   * With a `RequestStore` (one round trip decides a request's limits, quotas and leases):
   * how many keys' refusals to remember, so that a key the store refused by its rate
   * limits (until its retry time) or by an exhausted quota (until its refill, or until an
   * administrator changes the key) is refused in process, with the same answer, at no
   * round trip. Evicted by second chance beyond this size; 0 remembers none.
   * @default 10000
   */
  refusalMemory?: number;
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
  defaultPolicy: { limit: true, windowSeconds: true, burst: true, name: true, mode: true },
  quotaStore: true,
  refusalMemory: true,
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
  const rateLimits = createRateLimits({ defaults, formats: headerFormats(options.headers), clock, logger });
  const { onDecision } = options;
  if (onDecision !== undefined && typeof onDecision !== 'function') throw new ConfigError('onDecision must be a function');
  const emit = onDecision === undefined ? undefined : containedHook(onDecision, logger, clock);
  const requestStore: RequestStore | undefined = isRequestStore(options.store) ? options.store : undefined;
  const quotaStore = options.quotaStore ?? requestStore ?? createMemoryQuotaStore();
  // One round trip per request needs the quotas in the same store as the limits.
  const oneStep = requestStore !== undefined && quotaStore === requestStore ? requestStore : undefined;
  const { refusalMemory = 10_000 } = options;
  if (!Number.isSafeInteger(refusalMemory) || refusalMemory < 0) throw new ConfigError(`refusalMemory must be a number of keys (0 for none), got ${String(refusalMemory)}`);
  const refusals = oneStep === undefined || refusalMemory === 0 ? undefined : createRefusalMemory(refusalMemory);
  const oneStepWatch = createSilenceWatch(timeoutMs, 'request store');
  // After a failed one-step call the limiter decides step by step (each store with its own
  // onStoreError answer) until then.
  let oneStepRetryAt = 0;
  const spender = createQuotaSpender({
    store: quotaStore,
    clock,
    timeoutMs,
    failOpen: onStoreError === 'open',
    retryAfterSeconds: Math.max(1, Math.ceil(retryIntervalMs / 1000)),
    warn: (details, message) => logger.warn(details, message),
  });
  const quotas = createRequestQuotas(logger);

  /**
   * `check` with a `RequestStore`: a remembered refusal answers at once; otherwise one
   * store call decides, or, while that fails, the step-by-step `check`.
   */
  async function checkInOneStep(key: string, policies?: RateLimitPolicy | readonly RateLimitPolicy[] | null, checkOptions?: RateLimitCheckOptions): Promise<RateLimitCheckResult> {
    const request = limitRequest(key, policies, checkOptions);
    if (refusals !== undefined) refuseRemembered(request);
    // A request refused anyway (scopes, in-flight cap) counts against the limits alone: one call either way.
    if (oneStep !== undefined && request.refusal === undefined && clock() >= oneStepRetryAt) {
      const decided = await decideInOneStep(oneStep, request, undefined);
      if (decided !== undefined) return decided;
    }
    return check(key, policies, checkOptions);
  }

  async function checkWithLeases(
    key: string,
    policies: RateLimitPolicy | readonly RateLimitPolicy[] | null | undefined,
    checkOptions: RateLimitCheckOptions | undefined,
    claims: LeaseClaims,
  ): Promise<RateLimitCheckResult | undefined> {
    if (oneStep === undefined || claims.store !== oneStep) return undefined;
    const request = limitRequest(key, policies, checkOptions);
    if (refusals !== undefined) refuseRemembered(request);
    if (clock() < oneStepRetryAt) return undefined;
    return decideInOneStep(oneStep, request, claims);
  }

  /** Throws the refusal the store is certain to give `request`, remembered from an earlier one. */
  function refuseRemembered(request: LimitRequest): void {
    const recalled: RecalledRefusal | undefined = (refusals as NonNullable<typeof refusals>).recall(request, clock());
    if (recalled === undefined) return;
    const limits = rateLimits.decided(recalled.decisions);
    const { decision, headers } = limits;
    if (recalled.quotas === undefined) {
      emit?.(usageEvent(request, 'rate_limited', { decision }));
      throw rateLimitedError(headers);
    }
    const spent = quotas.summary(request, recalled.quotas);
    emit?.(usageEvent(request, 'quota_exhausted', { decision, quota: spent.key, ownerQuota: spent.owner }));
    throw quotaExhaustedError(request, spent, headers);
  }

  /**
   * The whole request in one store call: the rate limits, the leases of `claims`, the
   * quotas, in the order and with the outcomes of the step-by-step path. `undefined` when
   * the call failed: nothing is known, and the caller decides step by step.
   */
  async function decideInOneStep(store: RequestStore, request: LimitRequest, claims: LeaseClaims | undefined): Promise<RateLimitCheckResult | undefined> {
    const pairs = rateLimits.pairsOf(request);
    const entries = quotas.entriesOf(request);
    const sentAt = clock();
    const plan = spender.plan(entries, request.cost, sentAt);
    let output: RequestDecisionOutput;
    try {
      const pending = store.decideRequest({ limits: pairs, quotas: plan.requests, leases: claims?.leases ?? [] });
      output = pending instanceof Promise ? await oneStepWatch.wait(pending) : pending;
      if (output.limits.length !== pairs.length || (output.quotas !== undefined && output.quotas.length !== entries.length)) {
        throw new Error('request store returned a wrong number of decisions');
      }
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      oneStepRetryAt = clock() + retryIntervalMs;
      return undefined;
    }
    stores.answered(pairs, output.limits);
    const limits = rateLimits.decided(output.limits);
    const { decision, headers } = limits;
    if (!decision.allowed) {
      refusals?.remember(request, prepareGcra(pairs, 1), output.tats, output.nowMicros, sentAt);
      emit?.(usageEvent(request, 'rate_limited', { decision }));
      throw rateLimitedError(headers);
    }
    if (output.leaseRefused >= 0) {
      const refusal = (claims as LeaseClaims).refusal(output.leaseRefused);
      emit?.(usageEvent(request, 'concurrency_limited', { decision }));
      throw new KeysetError(refusal.code, { detail: refusal.detail, extensions: refusal.extensions, headers: { ...headers, ...refusal.headers } });
    }
    // An observed in-flight cap never refuses: the store names the lease it would refuse.
    const { observedLease = -1, observedQuotas = false } = output;
    const leaseWould = observedLease >= 0 ? leaseRefusal(claims as LeaseClaims, observedLease) : undefined;
    if (entries.length === 0 || output.quotas === undefined) return admitted(request, limits, undefined, leaseWould);
    const spent = quotas.summary(request, spender.settleRequest(plan, output.quotas, observedQuotas));
    if (!spent.allowed) {
      // Replayed from memory only when every quota is enforced (the memory holds enforced answers).
      if (refusals !== undefined && entries.every((e) => e.quota.mode !== 'observe')) {
        const parameters = prepareGcra(pairs, 1);
        const { newTats } = evaluateGcra(parameters.map((p, i) => ({ parameters: p, tat: output.tats[i] })), output.nowMicros, 1);
        refusals.remember(request, parameters, newTats, output.nowMicros, sentAt, [spent.key, spent.owner].filter((q) => q !== undefined));
      }
      emit?.(usageEvent(request, 'quota_exhausted', { decision, quota: spent.key, ownerQuota: spent.owner }));
      throw quotaExhaustedError(request, spent, headers);
    }
    return admitted(request, limits, spent, leaseWould);
  }

  /**
   * A request its limits and quotas admitted: its usage event (`would_refuse` when an
   * observed limit would have refused it: the rate limits' first, then an in-flight cap's,
   * then the quotas', the order in which enforced ones refuse), and its result.
   */
  function admitted(request: LimitRequest, limits: DecidedLimits, spent: SpentQuotas | undefined, leaseWould?: WouldRefusal): RateLimitCheckResult {
    const wouldRefuse = observedRefusal(limits) ?? request.wouldRefuse ?? leaseWould ?? spent?.wouldRefuse;
    emit?.(usageEvent(request, 'allowed', { decision: limits.decision, cost: spent?.cost ?? 0, quota: spent?.key, ownerQuota: spent?.owner, wouldRefuse }));
    const result: RateLimitCheckResult = { decision: limits.decision, decisions: limits.decisions, headers: limits.headers };
    if (spent?.key !== undefined) result.quota = spent.key;
    if (spent?.owner !== undefined) result.ownerQuota = spent.owner;
    if (wouldRefuse !== undefined) result.wouldRefuse = wouldRefuse;
    return result;
  }

  async function check(key: string, policies?: RateLimitPolicy | readonly RateLimitPolicy[] | null, checkOptions?: RateLimitCheckOptions): Promise<RateLimitCheckResult> {
    const request = limitRequest(key, policies, checkOptions);
    let limits: DecidedLimits;
    try {
      // Only a promise is awaited: the memory store's decisions are here already.
      const asked = stores.decideAll(rateLimits.pairsOf(request));
      limits = rateLimits.decided(asked instanceof Promise ? await asked : asked);
    } catch (error) {
      emit?.(usageEvent(request, 'unavailable', {}));
      throw error;
    }
    const { decision, headers } = limits;
    if (!decision.allowed) {
      emit?.(usageEvent(request, 'rate_limited', { decision }));
      throw rateLimitedError(headers);
    }
    // The quota is spent only once the rate limits admitted the request (a request they
    // refuse spends no credit), and not for a request refused anyway (scopes, in-flight cap).
    if (request.refusal !== undefined) {
      emit?.(usageEvent(request, request.refusal, { decision }));
      return limits;
    }
    if (!spendsQuota(request)) return admitted(request, limits, undefined);
    let spent: SpentQuotas;
    try {
      const entries = quotas.entriesOf(request);
      // Observed quotas only when no observed limit before them would refuse the request.
      const observed = limits.observed === undefined && request.wouldRefuse === undefined;
      spent = quotas.summary(request, await spender.spendRequest(entries, request.cost, { observed, headers }));
    } catch (error) {
      emit?.(usageEvent(request, 'unavailable', { decision }));
      throw error;
    }
    if (!spent.allowed) {
      emit?.(usageEvent(request, 'quota_exhausted', { decision, quota: spent.key, ownerQuota: spent.owner }));
      throw quotaExhaustedError(request, spent, headers);
    }
    return admitted(request, limits, spent);
  }

  return Object.freeze({
    defaultPolicy: policy,
    defaultPolicies: defaults,
    get storeState(): 'up' | StoreErrorMode {
      return stores.state;
    },
    check: oneStep === undefined ? check : checkInOneStep,
    ...(oneStep === undefined ? {} : { checkWithLeases }),
    async readQuota(key: string, quota: Quota, ownerId?: string | null): Promise<QuotaDecision> {
      if (typeof key !== 'string') throw new ConfigError(`A quota key must be a string, got ${typeof key}`);
      if (ownerId !== undefined && ownerId !== null && typeof ownerId !== 'string') throw new ConfigError(`An owner id must be a string, got ${typeof ownerId}`);
      return spender.spend(key, quotas.usableQuota(key, quota), 0, ownerId === undefined || ownerId === null ? undefined : ownerQuotaKey(ownerId));
    },
    async readOwnerQuota(ownerId: string, quota: Quota): Promise<QuotaDecision> {
      if (typeof ownerId !== 'string') throw new ConfigError(`An owner id must be a string, got ${typeof ownerId}`);
      const ownerKey = ownerQuotaKey(ownerId);
      return spender.spend(ownerKey, quotas.usableQuota(ownerKey, quota), 0);
    },
  });
}

/** The observed in-flight cap at `index` of `claims` that would have refused the request. */
function leaseRefusal(claims: LeaseClaims, index: number): WouldRefusal {
  const lease = claims.leases[index] as LeaseClaim;
  return { reason: 'concurrency_limited', policy: lease.holder.startsWith('owner:') ? 'owner.in_flight' : 'in_flight' };
}
