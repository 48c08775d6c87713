/**
 * The one call adapters make per protected request (docs/architecture.md, "The guard
 * adapters call"): key in query (400) → `Authorization: ApiKey` (401 missing, or
 * unsupported scheme when a key came as `Bearer` or in `X-API-Key`) → syntax
 * and checksum (401, no store access) → cache → store (401; store down → 503) → rate
 * limit (429 / 503) → scopes (403). Refused credentials are counted per client address
 * (`refused-credentials.ts`): an address over its budget gets 429 before anything else,
 * so a client without a valid key cannot make the store work for it without end. Every
 * authenticated request is counted, a request
 * refused for its scopes too, so scopes cannot be probed for free; its 403 carries the
 * RateLimit headers like any other authenticated response. Adapters map a thrown
 * `KeysetError` with `toProblem`.
 * @module
 */
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
import { MAX_QUOTA_COST } from '../quota/quota-period.ts';
import { TRUST_PROXY_OPTIONS, createClientAddressResolver, type ClientAddressInput, type TrustProxy } from '../net/client-address.ts';
import type { RateLimitCheckOptions, RateLimitCheckResult, RateLimitPolicy, RateLimiter } from '../rate-limit/types.ts';
import { refusedCaller } from './internal/scope-refusal.ts';
import { createRefusedCredentialLimit, type RefusedCredentialsOptions } from './refused-credentials.ts';
import type { VerifiedKey } from './key-record.ts';
import { isValidScope } from './scopes.ts';
import { maybeSyncVariant, withMaybeSync } from '../maybe-promise.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import type { AuthenticateOptions, AuthenticateRequest, Keyring } from './keyring.ts';
import { NO_LEASE, type ConcurrencyLimit, type ReleaseLease } from '../concurrency/concurrency-limit.ts';

/** Options of `createApiKeyGuard`. */
export interface ApiKeyGuardOptions {
  /** Verifies keys; only `authenticate` is used. */
  keyring: Pick<Keyring, 'authenticate'>;
  /** Per-identity rate limit: the identity's `rateLimit`, else the limiter's default. */
  limiter?: RateLimiter;
  /**
   * Realm of the `WWW-Authenticate` challenge.
   * @default the keyring's realm
   */
  realm?: string;
  /**
   * Which `X-Forwarded-For` entries name the client, for keys with an IP allowlist
   * (docs/security.md, "Trusted proxies"): `false` trusts none and uses the socket's peer;
   * `{ hops: 1 }` one load balancer you run; `{ cidrs: ['10.0.0.0/8'] }` proxies by address.
   * Trusting a header your own proxy does not overwrite lets any client pick its address.
   * @default false
   */
  trustProxy?: TrustProxy;
  /**
   * Budget of refused credentials (`invalid_api_key`) per client address, as resolved with
   * `trustProxy` (an IPv6 address by its /64): past it, every request from that address is
   * 429 `rate_limited` with `Retry-After`, before any key is parsed or looked up, until
   * the budget has room again (docs/rate-limits.md, "Refused credentials"). Pass a shared
   * `store` (Redis) to count across instances; `false` turns it off.
   * @default { limit: 60, windowSeconds: 60 } per instance, in memory
   */
  refusedCredentials?: RefusedCredentialsOptions | false;
  /**
   * In-flight limit per key and per owner (docs/rate-limits.md, "In-flight limits"): an
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

/** What an endpoint requires and costs. Build it once per route: it is passed as is on every request. */
export interface ApiKeyGuardCheckOptions {
  /** Scopes the endpoint requires; all must be granted. */
  scopes?: readonly string[];
  /**
   * Credits a request to this endpoint spends from the key's quota and from its owner's
   * (keys without either spend nothing). An integer from 0 (free) to 1,000,000.
   * @default 1
   */
  cost?: number;
  /** The route's name for the limiter's `onDecision` events, e.g. `GET /api/orders`. */
  route?: string;
}

/** A request that passed: the caller and the headers to add to the response (`RateLimit…`). */
export interface ApiKeyGuardResult {
  key: VerifiedKey;
  headers: Record<string, string>;
  /** The client's address as the guard resolved it (see `trustProxy`); `undefined` when unknown. */
  clientAddress: string | undefined;
  /**
   * Gives the request's in-flight lease back (see `concurrency`). Adapters call it once the
   * response is finished, on every path: sent, handler error, client abort. Calling it
   * again does nothing; without a limit it does nothing at all. Optional so a guard of
   * your own need not have it.
   */
  release?: ReleaseLease;
}

/** The guard; `check` throws `KeysetError`s, never a plain error for client input. */
export interface ApiKeyGuard {
  check(request: ApiKeyGuardRequest, options?: ApiKeyGuardCheckOptions): Promise<ApiKeyGuardResult>;
}

const NO_CHECK_OPTIONS: ApiKeyGuardCheckOptions = Object.freeze({});

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
  if (typeof keyring?.authenticate !== 'function') throw new ConfigError('keyring must be a Keyring (see createKeyring)');
  if (limiter !== undefined && typeof limiter.check !== 'function') throw new ConfigError('limiter must be a RateLimiter (see createRateLimiter)');
  if (refusedCredentials !== false && (typeof refusedCredentials !== 'object' || refusedCredentials === null)) {
    throw new ConfigError('refusedCredentials must be false or { limit, windowSeconds, store? }');
  }
  const refusals = refusedCredentials === false ? undefined : createRefusedCredentialLimit(refusedCredentials);
  if (concurrency !== undefined && typeof concurrency?.acquire !== 'function') throw new ConfigError('concurrency must be a ConcurrencyLimit (see createConcurrencyLimit)');
  const inFlight = concurrency;
  // Keyring and limiter functions that can answer synchronously carry a twin that does
  // (maybe-promise.ts); one of your own, or a replaced method, is awaited as before.
  const authenticate = (request: AuthenticateRequest, authOptions: AuthenticateOptions): VerifiedKey | Promise<VerifiedKey> => {
    const method = keyring.authenticate;
    const fast = maybeSyncVariant(method);
    return fast !== undefined ? fast(request, authOptions) : method.call(keyring, request, authOptions);
  };
  const limit =
    limiter === undefined
      ? undefined
      : (key: string, policies: RateLimitPolicy | readonly RateLimitPolicy[] | undefined, limitOptions: RateLimitCheckOptions): RateLimitCheckResult | Promise<RateLimitCheckResult> => {
          const method = limiter.check;
          const fast = maybeSyncVariant(method);
          return fast !== undefined ? fast(key, policies, limitOptions) : method.call(limiter, key, policies, limitOptions);
        };
  // The options passed to `authenticate`, per route options object (routes build theirs
  // once with `apiKeyCheckOptions`, so this is one entry per route).
  const authOptionsCache = new WeakMap<ApiKeyGuardCheckOptions, AuthenticateOptions>();
  const authOptionsOf = (checkOptions: ApiKeyGuardCheckOptions): AuthenticateOptions => {
    // Without a realm of the guard's own, the route's options are the authenticate options
    // as they are (`authenticate` reads `scopes` and `realm`; they hold no `realm`): no copy,
    // no lookup.
    if (realm === undefined && (checkOptions as AuthenticateOptions).realm === undefined) return checkOptions;
    let out = authOptionsCache.get(checkOptions);
    if (out === undefined) {
      const { scopes } = checkOptions;
      out = realm === undefined ? { ...(scopes && { scopes }) } : { realm, ...(scopes && { scopes }) };
      // Only a frozen options object cannot change under the cached copy.
      if (Object.isFrozen(checkOptions)) authOptionsCache.set(checkOptions, out);
    }
    return out;
  };

  /**
   * A refused request. An invalid key counts against its address's budget (429 once over);
   * a valid key refused for its scopes: charge the request to its budget, then throw the 403
   * with the RateLimit headers.
   */
  function refused(error: unknown, checkOptions: ApiKeyGuardCheckOptions, clientAddress: string | undefined): never | Promise<never> {
    if (refusals !== undefined && clientAddress !== undefined && isKeysetError(error) && error.code === 'invalid_api_key') {
      return refusals.refused(clientAddress, error);
    }
    const caller = refusedCaller(error);
    if (caller === undefined || limit === undefined) throw error;
    // A valid key refused for its scopes still spends a request (a 429 wins once the
    // budget is gone) but no quota credit, and the 403 says how much budget is left.
    const refusal = error as KeysetError;
    const raise = ({ headers }: RateLimitCheckResult): never => {
      throw new KeysetError(refusal.code, { detail: refusal.detail, extensions: refusal.extensions, headers: { ...refusal.headers, ...headers } });
    };
    const result = limit(caller.id, policiesOf(caller), { ...limiterOptions(caller, checkOptions), refusal: 'insufficient_scope' });
    return result instanceof Promise ? result.then(raise) : raise(result);
  }

  /** The limits belong to the identity: both secrets of a rotation share one budget. */
  function admitted(key: VerifiedKey, checkOptions: ApiKeyGuardCheckOptions, clientAddress: string | undefined): ApiKeyGuardResult | Promise<ApiKeyGuardResult> {
    if (inFlight !== undefined) return leasedFirst(key, checkOptions, clientAddress);
    if (limit === undefined) return { key, headers: {}, clientAddress, release: NO_LEASE };
    const result = limit(key.id, policiesOf(key), limiterOptions(key, checkOptions));
    return result instanceof Promise ? result.then(({ headers }) => ({ key, headers, clientAddress, release: NO_LEASE })) : { key, headers: result.headers, clientAddress, release: NO_LEASE };
  }

  /**
   * With an in-flight limit, the lease is taken before the limiter spends anything, so a
   * request refused for the lease spends no quota credit (a client waiting for a slot does
   * not drain its quota): refused, it counts against the rate limits like a request refused
   * for its scopes (a 429 `rate_limited` wins once the budget is gone) and the 429
   * `concurrency_limited` carries their headers. Admitted by the lease but refused by the
   * limiter, the lease is given back at once.
   */
  function leasedFirst(key: VerifiedKey, checkOptions: ApiKeyGuardCheckOptions, clientAddress: string | undefined): ApiKeyGuardResult | Promise<ApiKeyGuardResult> {
    const withLease = (release: ReleaseLease): ApiKeyGuardResult | Promise<ApiKeyGuardResult> => {
      if (limit === undefined) return { key, headers: {}, clientAddress, release };
      const refusedByLimiter = (error: unknown): never => {
        release();
        throw error;
      };
      let result: RateLimitCheckResult | Promise<RateLimitCheckResult>;
      try {
        result = limit(key.id, policiesOf(key), limiterOptions(key, checkOptions));
      } catch (error) {
        return refusedByLimiter(error);
      }
      return result instanceof Promise ? result.then(({ headers }) => ({ key, headers, clientAddress, release }), refusedByLimiter) : { key, headers: result.headers, clientAddress, release };
    };
    const leaseRefused = (error: unknown): never | Promise<never> => {
      if (limit === undefined || !isKeysetError(error) || error.code !== 'concurrency_limited') throw error;
      const raise = ({ headers }: RateLimitCheckResult): never => {
        throw new KeysetError(error.code, { detail: error.detail, extensions: error.extensions, headers: { ...headers, ...error.headers } });
      };
      const result = limit(key.id, policiesOf(key), { ...limiterOptions(key, checkOptions), refusal: 'concurrency_limited' });
      return result instanceof Promise ? result.then(raise) : raise(result);
    };
    let lease: ReleaseLease | Promise<ReleaseLease>;
    try {
      lease = inFlight!.acquire(key, {});
    } catch (error) {
      return leaseRefused(error);
    }
    return lease instanceof Promise ? lease.then(withLease, leaseRefused) : withLease(lease);
  }

  function checkMaybeSync(request: ApiKeyGuardRequest, checkOptions: ApiKeyGuardCheckOptions = NO_CHECK_OPTIONS): ApiKeyGuardResult | Promise<ApiKeyGuardResult> {
    const clientAddress = resolveClientAddress(request);
    // An address over its budget of refused credentials: 429 before any parse or lookup.
    const release = refusals?.admit(clientAddress);
    if (release === undefined) return checkFrom(request, checkOptions, clientAddress);
    // A watched address (it sent a bad key lately): its requests in flight are counted.
    let result: ApiKeyGuardResult | Promise<ApiKeyGuardResult>;
    try {
      result = checkFrom(request, checkOptions, clientAddress);
    } catch (error) {
      release();
      throw error;
    }
    if (!(result instanceof Promise)) {
      release();
      return result;
    }
    return result.then(
      (passed) => (release(), passed),
      (error: unknown) => {
        release();
        throw error;
      },
    );
  }

  function checkFrom(request: ApiKeyGuardRequest, checkOptions: ApiKeyGuardCheckOptions, clientAddress: string | undefined): ApiKeyGuardResult | Promise<ApiKeyGuardResult> {
    const authRequest = { authorization: request.authorization, xApiKey: request.xApiKey, url: request.url, clientAddress };
    let key: VerifiedKey | Promise<VerifiedKey>;
    try {
      key = authenticate(authRequest, authOptionsOf(checkOptions));
    } catch (error) {
      return refused(error, checkOptions, clientAddress);
    }
    if (key instanceof Promise) {
      return key.then(
        (verified) => admitted(verified, checkOptions, clientAddress),
        (error: unknown) => refused(error, checkOptions, clientAddress),
      );
    }
    return admitted(key, checkOptions, clientAddress);
  }

  // Synchronous when the keyring's caches and the limiter's store are (see maybe-promise.ts).
  const check = withMaybeSync(checkMaybeSync);
  // Whether `check` looks at `forwardedFor` (see `guardReadsForwardedFor`).
  Object.defineProperty(check, READS_FORWARDED_FOR, { value: trustProxy !== false });
  return Object.freeze({ check });
}

const READS_FORWARDED_FOR = Symbol.for('keyset.readsForwardedFor');

/**
 * Whether `guard.check` may read the request's `forwardedFor`: `false` only for a guard
 * from `createApiKeyGuard` without `trustProxy`, which resolves the client address from
 * the socket's peer alone; `true` for any other guard (one of your own, or a `check`
 * replaced or wrapped), whatever it does. Adapters ask once and skip reading the
 * `X-Forwarded-For` header per request when the answer is `false`.
 *
 * @example
 * ```ts
 * const readsForwardedFor = guardReadsForwardedFor(guard);
 * const forwardedFor = readsForwardedFor ? req.headers['x-forwarded-for'] : undefined;
 * ```
 */
export function guardReadsForwardedFor(guard: Pick<ApiKeyGuard, 'check'>): boolean {
  const check = guard.check as unknown as Record<symbol, unknown>;
  return typeof check !== 'function' || check[READS_FORWARDED_FOR] !== false;
}

/** The key's policies as the limiter takes them: one policy alone (the cheap path), a list, or the default. */
function policiesOf(key: VerifiedKey): RateLimitPolicy | readonly RateLimitPolicy[] | undefined {
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

/**
 * Validates what an adapter's `apiKey({ scopes, cost, route })` was given and returns the
 * frozen per-route options to pass to `guard.check` on every request (built once, so the
 * request path allocates nothing for them). Throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const checkOptions = apiKeyCheckOptions({ scopes: ['reports:read'], cost: 10, route: 'GET /api/reports' });
 * ```
 */
export function apiKeyCheckOptions(options: ApiKeyGuardCheckOptions): ApiKeyGuardCheckOptions {
  const { scopes = [], cost, route } = options;
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
  if (cost !== undefined) out.cost = cost;
  if (route !== undefined) out.route = route;
  return Object.freeze(out);
}
