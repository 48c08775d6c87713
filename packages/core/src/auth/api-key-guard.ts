/**
 * The one call adapters make per protected request, read top to bottom in `check`:
 *
 * 1. the client's address, as `trustProxy` says to read it;
 * 2. the refused-credentials gate: an address over its budget of refused keys gets 429
 *    before anything else, so a client without a valid key cannot make the store work
 *    for it without end;
 * 3. identify the key: key in the query (400), `Authorization: ApiKey` (401 missing or
 *    unsupported scheme), syntax and checksum (401, no store access), cache, store (401;
 *    store down 503), IP allowlist (403); a refused key counts against its address's
 *    budget;
 * 4. scopes (403), before the lease and the quota: a request refused for its scopes holds
 *    no slot and spends no credit, yet counts against the key's rate limits (scopes
 *    cannot be probed for free) and its 403 carries their headers;
 * 5. the in-flight lease (429 `concurrency_limited`, counted against the rate limits the
 *    same way);
 * 6. limits and quotas (429, or 503 while a store fails closed).
 *
 * With a limiter whose store decides a whole request in one call (`RequestStore`), 5 and 6
 * are that one call (`checkWithLeases`), with the same outcomes.
 *
 * One `try/finally` owns the lease: any refusal after it was taken gives it back; an
 * admitted request hands it to the adapter, which releases it when the response ends.
 * Adapters map a thrown `KeysetError` with `toProblem`.
 *
 * A route's side of the guard sits here too: what an endpoint requires and costs
 * (`apiKeyCheckOptions`, built once per route), and what the limiter is told for a key on
 * that route (`keyPolicies`, `limiterOptions`, at the end).
 * @module
 */
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
import { TRUST_PROXY_OPTIONS, createClientAddressResolver, type ClientAddressInput, type TrustProxy } from '../net/client-address.ts';
import { MAX_QUOTA_COST } from '../quota/quota-period.ts';
import type { RateLimitCheckOptions, RateLimitCheckResult, RateLimitPolicy, RateLimiter, WouldRefusal } from '../rate-limit/types.ts';
import { createRefusedCredentialLimit, refusalBucket, type RefusedCredentialsOptions } from './refused-credentials.ts';
import type { VerifiedKey } from '../keys/key-record.ts';
import { isValidScope } from '../keys/scopes.ts';
import { permissionQuery, type PermissionQuery } from './permission-query.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { AuthenticateOptions, AuthenticateRequest, Keyring } from './keyring.ts';
import { NO_LEASE, type ConcurrencyLimit, type ReleaseLease } from '../concurrency/concurrency-limit.ts';
import type { HeldLeases } from '../concurrency/types.ts';

/** Options of `createApiKeyGuard`. */
export interface ApiKeyGuardOptions {
  /** Verifies keys (`authenticate`) and checks their scopes (`authorize`). */
  keyring: Pick<Keyring, 'authenticate' | 'authorize'>;
  /** Per-identity rate limit: the identity's `rateLimit`, else the limiter's default. */
  limiter?: RateLimiter;
  /**
   * Realm of the `WWW-Authenticate` challenge.
   * @default the keyring's realm
   */
  realm?: string;
  /**
   * Which `X-Forwarded-For` entries name the client, for keys with an IP allowlist: `false`
   * trusts none and uses the socket's peer;
   * `{ hops: 1 }` one load balancer you run; `{ cidrs: ['10.0.0.0/8'] }` proxies by address.
   * Trusting a header your own proxy does not overwrite lets any client pick its address.
   * @default false
   */
  trustProxy?: TrustProxy;
  /**
   * Budget of refused credentials (`invalid_api_key`) per client address, as resolved with
   * `trustProxy` (an IPv6 address by its /64): past it, every request from that address is
   * 429 `rate_limited` with `Retry-After`, before any key is parsed or looked up, until
   * the budget has room again. Pass a shared
   * `store` (Redis) to count across instances; `false` turns it off.
   * @default { limit: 60, windowSeconds: 60 } per instance, in memory
   */
  refusedCredentials?: RefusedCredentialsOptions | false;
  /**
   * In-flight limit per key and per owner: an
   * admitted request holds a lease until its adapter calls the result's `release()`; past
   * `max` (or the owner's `ownerMax`) the request is 429 `concurrency_limited` with `Retry-After`. Decided after the rate limit,
   * so a refused request still spent one request of the key's rate limit. Built with
   * `createConcurrencyLimit({ max })`, so a guard without one bundles none of its code.
   * @default no in-flight limit
   */
  concurrency?: ConcurrencyLimit;
}

/** Every name `ApiKeyGuardOptions` knows, checked when the guard is made. */
const GUARD_OPTIONS = {
  keyring: true,
  limiter: true,
  realm: true,
  trustProxy: TRUST_PROXY_OPTIONS,
  refusedCredentials: { limit: true, windowSeconds: true, store: true, maxTracked: true, clock: true, logger: true },
  concurrency: true,
} as const satisfies KnownOptions<ApiKeyGuardOptions>;

/**
 * The request parts the guard reads. Adapters pass the socket's peer address and the
 * `X-Forwarded-For` header as they are; the guard decides what to believe.
 */
export interface ApiKeyGuardRequest extends Omit<AuthenticateRequest, 'clientAddress'>, ClientAddressInput {}

/** A request that passed: the caller and the headers to add to the response (`RateLimit…`). */
export interface ApiKeyGuardResult {
  key: VerifiedKey;
  headers: Record<string, string>;
  /** The client's address as the guard resolved it (see `trustProxy`); `undefined` when unknown. */
  clientAddress: string | undefined;
  /**
   * Set when an observed (shadow) limit would have refused this request, which is served
   * all the same: why, and which limit. For metrics and logs; adapters send nothing of it.
   */
  wouldRefuse?: WouldRefusal;
  /**
   * Gives the request's in-flight lease back (see `concurrency`). Adapters call it once the
   * response is finished, on every path: sent, handler error, client abort. Calling it
   * again does nothing; without a limit it does nothing at all. Optional so a guard of
   * your own need not have it.
   */
  release?: ReleaseLease;
}

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

/** The guard; `check` rejects with `KeysetError`s, never a plain error for client input. */
export interface ApiKeyGuard {
  check(request: ApiKeyGuardRequest, options?: ApiKeyGuardCheckOptions): Promise<ApiKeyGuardResult>;
}

const NO_CHECK_OPTIONS: ApiKeyGuardCheckOptions = Object.freeze({});

/** `result`, naming the observed limit that would have refused it, if any. */
function withWouldRefuse(result: ApiKeyGuardResult, wouldRefuse: WouldRefusal | undefined): ApiKeyGuardResult {
  if (wouldRefuse !== undefined) result.wouldRefuse = wouldRefuse;
  return result;
}
const NOT_WATCHED = (): void => {};

/**
 * Creates the guard adapters call for every protected route.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, limiter });
 * const { key, headers } = await guard.check(
 *   { authorization: req.headers.authorization, url: req.url, remoteAddress: req.socket.remoteAddress },
 *   { scopes: ['orders:read'] },
 * );
 * ```
 */
export function createApiKeyGuard(options: ApiKeyGuardOptions): ApiKeyGuard {
  assertKnownOptions('createApiKeyGuard', options, GUARD_OPTIONS);
  const { keyring, limiter, realm, trustProxy = false, refusedCredentials = {}, concurrency } = options;
  const resolveClientAddress = createClientAddressResolver(trustProxy);
  if (typeof keyring?.authenticate !== 'function' || typeof keyring.authorize !== 'function') throw new ConfigError('keyring must be a Keyring (see createKeyring)');
  if (limiter !== undefined && typeof limiter.check !== 'function') throw new ConfigError('limiter must be a RateLimiter (see createRateLimiter)');
  if (refusedCredentials !== false && (typeof refusedCredentials !== 'object' || refusedCredentials === null)) {
    throw new ConfigError('refusedCredentials must be false or { limit, windowSeconds, store? }');
  }
  const refusals = refusedCredentials === false ? undefined : createRefusedCredentialLimit(refusedCredentials);
  if (concurrency !== undefined && typeof concurrency?.acquire !== 'function') throw new ConfigError('concurrency must be a ConcurrencyLimit (see createConcurrencyLimit)');
  // The key is identified without the route's scopes: the guard checks them itself, so
  // it can charge a refused request to the key's rate limits.
  const identifyOptions: AuthenticateOptions = Object.freeze(realm === undefined ? {} : { realm });

  async function check(request: ApiKeyGuardRequest, route: ApiKeyGuardCheckOptions = NO_CHECK_OPTIONS): Promise<ApiKeyGuardResult> {
    const clientAddress = resolveClientAddress(request);
    const bucket = refusalBucket(clientAddress, request);
    const endRefusalWatch = watchRefusedAddress(bucket);
    let release: ReleaseLease = NO_LEASE;
    try {
      let key: VerifiedKey;
      try {
        key = await keyring.authenticate({ authorization: request.authorization, xApiKey: request.xApiKey, url: request.url, clientAddress }, identifyOptions);
      } catch (error) {
        // A refused key counts against its address's budget, which may answer 429 instead.
        if (refusals !== undefined) await refusals.refused(bucket, error);
        throw error;
      }
      const refusal = scopeRefusal(key, route);
      if (refusal !== undefined) await chargeAndRefuse(key, route, refusal);
      let held: HeldLeases | undefined;
      if (concurrency !== undefined) {
        const claims = concurrency.claim?.(key);
        // A limiter whose store decides the leases with the limits: one call for all.
        if (claims !== undefined && limiter?.checkWithLeases !== undefined) {
          const decided = await limiter.checkWithLeases(key.id, keyPolicies(key), limiterOptions(key, route), claims);
          if (decided !== undefined) return withWouldRefuse({ key, headers: decided.headers, clientAddress, release: claims.held() }, decided.wouldRefuse);
        }
        if (claims === undefined) release = await lease(key, route, () => concurrency.acquire(key));
        else {
          held = await lease(key, route, () => claims.take());
          release = held.release;
        }
      }
      const { headers, wouldRefuse } = await spendLimitsAndQuotas(key, route, held?.wouldRefuse);
      // An observed limit after the in-flight caps would refuse the request: an enforced
      // one would have taken no lease, so the observed caps hold none for it either.
      if (wouldRefuse !== undefined) held?.releaseObserved();
      const admitted = withWouldRefuse({ key, headers, clientAddress, release }, wouldRefuse);
      // The adapter's now: it releases the lease when the response is finished.
      release = NO_LEASE;
      return admitted;
    } finally {
      release();
      endRefusalWatch();
    }
  }

  /**
   * Refused-credentials budget: throws the 429 for an address over it; otherwise counts the
   * request in flight for a watched address and returns what ends that count once the
   * request is answered.
   */
  function watchRefusedAddress(bucket: string | undefined): () => void {
    return refusals?.admit(bucket) ?? NOT_WATCHED;
  }


  /** Scopes: the 403 for a key that lacks one (to be counted against its rate limits, see `chargeAndRefuse`). */
  function scopeRefusal(key: VerifiedKey, route: ApiKeyGuardCheckOptions): unknown {
    try {
      keyring.authorize(key, route.scopes, route.permissions);
      return undefined;
    } catch (refusal) {
      return refusal;
    }
  }

  /** The in-flight leases `take` takes; past a cap, the 429, counted against the key's rate limits (see `chargeAndRefuse`). */
  async function lease<T>(key: VerifiedKey, route: ApiKeyGuardCheckOptions, take: () => Promise<T>): Promise<T> {
    try {
      return await take();
    } catch (error) {
      if (isKeysetError(error) && error.code === 'concurrency_limited') await chargeAndRefuse(key, route, error);
      throw error;
    }
  }

  /**
   * Limits and quotas, which belong to the identity (both secrets of a rotation share them):
   * the headers to send, and the observed limit that would refuse the request, if any
   * (`leaseWould`: an observed in-flight cap the leases found full).
   */
  function spendLimitsAndQuotas(key: VerifiedKey, route: ApiKeyGuardCheckOptions, leaseWould: WouldRefusal | undefined): Promise<Pick<RateLimitCheckResult, 'headers' | 'wouldRefuse'>> {
    if (limiter === undefined) return Promise.resolve({ headers: {} });
    const options = limiterOptions(key, route);
    return limiter.check(key.id, keyPolicies(key), leaseWould === undefined ? options : { ...options, wouldRefuse: leaseWould });
  }

  /**
   * A request refused after its key was identified (scopes, in-flight cap) still counts
   * against the key's rate limits but spends no quota credit: once the limits are spent,
   * their 429 `rate_limited` wins; otherwise the refusal goes out with their headers.
   */
  async function chargeAndRefuse(key: VerifiedKey, route: ApiKeyGuardCheckOptions, refusal: unknown): Promise<never> {
    if (limiter === undefined || !isKeysetError(refusal)) throw refusal;
    const limits: RateLimitCheckOptions = { ...limiterOptions(key, route), refusal: refusal.code as NonNullable<RateLimitCheckOptions['refusal']> };
    const { headers } = await limiter.check(key.id, keyPolicies(key), limits);
    throw new KeysetError(refusal.code, { detail: refusal.detail, extensions: refusal.extensions, headers: { ...headers, ...refusal.headers } });
  }

  return Object.freeze({ check });
}

/** The key's policies as the limiter takes them: one policy alone (the cheap path), a list, or the default. */
function keyPolicies(key: VerifiedKey): RateLimitPolicy | readonly RateLimitPolicy[] | undefined {
  const list = key.rateLimits;
  if (list === null || list === undefined) return key.rateLimit ?? undefined;
  return list.length === 1 ? list[0] : list;
}

/** Per-request limiter options: the key's quota, environment and owner (its limits decided with the key's), the route's cost and name. */
function limiterOptions(key: VerifiedKey, options: ApiKeyGuardCheckOptions): RateLimitCheckOptions {
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
