/**
 * What a client that has no valid key can make the server spend. The
 * checksum is public, so anyone can make unlimited distinct keys that pass it, and each
 * unknown one costs a key store lookup (5,000 of them cost 5,010 database transactions at
 * 4,376 req/s from one address). Refused credentials (`invalid_api_key`: malformed, bad
 * checksum, unknown, expired, revoked) are counted per client address with GCRA, in the
 * limiter's store (memory per instance, or Redis shared), and once an address is over its
 * budget every request from it is answered 429 `rate_limited` with `Retry-After` before
 * anything is parsed or looked up, valid keys included, until the budget has room again.
 *
 * The request path pays one size check for this while nobody sent a bad key lately. This
 * instance watches the addresses that did (for one window after their last refusal): how
 * much budget the store said was left, until when an address is over, and how many of its
 * requests are in flight, which may never exceed the budget left (so a thousand requests
 * at once cannot all reach the store before the first refusal is counted; once over, one
 * request per emission interval probes). The store is asked only after a refusal. With a
 * shared store and N instances, an address gets its budget plus at most one probe per
 * instance per interval, plus, once per window, the requests it had in flight when its
 * first refusal of the window was counted.
 *
 * Addresses are the guard's client addresses (`trustProxy` rules); an IPv6 address counts
 * by its /64 (one customer's network, which hands out the other 2^64 addresses freely).
 * Requests whose address cannot be read (a trusted proxy that writes `X-Forwarded-For:
 * unknown`, a peer that is not an address) share one bucket: exempting them would let
 * anyone behind such a proxy make the store work without end. A request that carries no
 * address at all (an adapter given none) is not counted: every request of such a
 * deployment would share the bucket, and one bad client would lock out all the others.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, KeysetError, isKeysetError } from '../errors.ts';
import { createFailureLog } from '../internal/failure-log.ts';
import { formatIp, parseIp } from '../net/ip-address.ts';
import type { ClientAddressInput } from '../net/client-address.ts';
import { rateLimitPolicyProblem } from '../rate-limit/gcra.ts';
import { createStoreDecider } from '../rate-limit/store-decider.ts';
import type { RateLimitDecision, RateLimitLogger, RateLimitPolicy, RateLimitStore } from '../rate-limit/types.ts';
import { consoleWarnLogger } from '../internal/console-warn.ts';

/** Options of the guard's `refusedCredentials`. */
export interface RefusedCredentialsOptions {
  /**
   * Refused credentials one client address may send per `windowSeconds` (also the burst).
   * @default 60
   */
  limit?: number;
  /**
   * @default 60
   */
  windowSeconds?: number;
  /**
   * Where the counts live. Per instance by default; `createRedisRateLimitStore({ redis,
   * prefix: 'keyset:refused:' })` shares them between instances. A failing store falls
   * back to counting in this instance (`onStoreError: 'local'`).
   * @default createMemoryRateLimitStore()
   */
  store?: RateLimitStore;
  /**
   * Addresses this instance watches at once: those that sent a refused credential within
   * the last window (the oldest is forgotten first, and starts afresh).
   * @default 10000
   */
  maxTracked?: number;
  /** @default systemClock */
  clock?: Clock;
  /**
   * Receives store outages and addresses going over (once per 10 s, with a count).
   * @default console
   */
  logger?: RateLimitLogger;
}

/** Internal: the guard's budget of refused credentials per client address. */
export interface RefusedCredentialLimit {
  /**
   * Before a request from `address` is authenticated: throws the 429 when this instance
   * knows the address is over its budget, or has as many of its requests in flight as the
   * budget has room for. No store call. Returns the function to call once the request is
   * answered, or `undefined` when the address is not being watched (nothing to call).
   */
  admit(address: string | undefined): (() => void) | undefined;
  /** A credential from `address` was refused with `error`: counts it, then rejects with `error`, or the 429 once over. */
  refused(address: string | undefined, error: unknown): Promise<never>;
}

/** What this instance knows of an address that sent a refused credential. */
interface Watched {
  /** Budget left after its last counted refusal (the store's answer). */
  remaining: number;
  /** Epoch ms before which the address is over (429 without asking anything). */
  until: number;
  /** Its requests past `admit` and not answered yet. */
  inFlight: number;
  /** When its last refusal was counted. */
  lastAt: number;
}

/** The default budget: 60 refused credentials a minute per client address. */
export const REFUSED_CREDENTIALS_DEFAULTS: Readonly<{ limit: number; windowSeconds: number; maxTracked: number }> = Object.freeze({
  limit: 60,
  windowSeconds: 60,
  maxTracked: 10_000,
});

/** The one bucket of every request whose address cannot be read. */
export const UNREADABLE_ADDRESS = 'unreadable-address';

/**
 * What a request's refused credentials are counted under: its resolved address, the
 * shared bucket when it carried a peer address that resolved to nothing, or `undefined`
 * (not counted) when it carried none.
 */
export function refusalBucket(clientAddress: string | undefined, request: ClientAddressInput): string | undefined {
  if (clientAddress !== undefined) return clientAddress;
  const peer = request.remoteAddress;
  return typeof peer === 'string' && peer !== '' ? UNREADABLE_ADDRESS : undefined;
}

/** What an address is counted by: IPv4 as is, IPv6 by its /64. */
export function refusalKey(address: string): string {
  if (!address.includes(':')) return address;
  const bytes = parseIp(address);
  if (bytes === undefined) return address;
  bytes.fill(0, 8);
  return `${formatIp(bytes)}/64`;
}

/** Creates the budget (the guard calls it once). Throws `ConfigError` for bad options. */
export function createRefusedCredentialLimit(options: RefusedCredentialsOptions): RefusedCredentialLimit {
  const {
    limit = REFUSED_CREDENTIALS_DEFAULTS.limit,
    windowSeconds = REFUSED_CREDENTIALS_DEFAULTS.windowSeconds,
    maxTracked = REFUSED_CREDENTIALS_DEFAULTS.maxTracked,
    clock = systemClock,
    logger = consoleWarnLogger,
    store,
  } = options;
  const policy: RateLimitPolicy = Object.freeze({ limit, windowSeconds, name: 'refused_credentials' });
  const problem = rateLimitPolicyProblem(policy);
  if (problem !== undefined) throw new ConfigError(`refusedCredentials: ${problem}`);
  // The store's decisions with the limiter's outage handling: a failing shared store falls
  // back to counting in this instance. The limiter itself (headers, quotas, events) is not
  // needed here, nor bundled with the guard.
  let decider: ReturnType<typeof createStoreDecider>;
  try {
    decider = createStoreDecider({ store, onStoreError: 'local', timeoutMs: 1000, retryIntervalMs: 1000, clock, logger });
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`refusedCredentials: ${error.message}`);
    throw error;
  }
  if (!Number.isSafeInteger(maxTracked) || maxTracked < 1) {
    throw new ConfigError(`refusedCredentials.maxTracked must be a positive integer, got ${String(maxTracked)}`);
  }
  const watched = new Map<string, Watched>();
  const emissionMs = (windowSeconds * 1000) / limit;
  const windowMs = windowSeconds * 1000;
  const overLog = createFailureLog({ write: (fields, message) => logger.warn(fields, message), clock });

  function tooMany(retryAfterSeconds: number): KeysetError {
    const seconds = Math.max(1, retryAfterSeconds);
    return new KeysetError('rate_limited', {
      detail: `Too many requests with invalid API keys from this address; retry in ${seconds} s.`,
      headers: { 'retry-after': String(seconds) },
      extensions: { retry_after: seconds },
    });
  }

  function watch(key: string, now: number): Watched {
    let entry = watched.get(key);
    if (entry === undefined) {
      entry = { remaining: limit, until: 0, inFlight: 0, lastAt: now };
      watched.set(key, entry);
      // The oldest first; one forgotten while it has requests in flight only loses their count.
      if (watched.size > maxTracked) watched.delete(watched.keys().next().value as string);
    }
    return entry;
  }

  function admit(address: string | undefined): (() => void) | undefined {
    // Nobody sent a refused credential lately: one size check, nothing else.
    if (watched.size === 0 || address === undefined) return undefined;
    const key = refusalKey(address);
    const entry = watched.get(key);
    if (entry === undefined) return undefined;
    const now = clock();
    if (now < entry.until) throw tooMany(Math.ceil((entry.until - now) / 1000));
    if (entry.inFlight === 0 && now - entry.lastAt >= windowMs) {
      // A whole window without a refusal: the budget is full again.
      watched.delete(key);
      return undefined;
    }
    // No more requests at once than the budget has refusals left, so concurrent requests
    // cannot all reach the store before the first of them is counted (at least one, the
    // probe, once the budget has room again).
    if (entry.inFlight >= Math.max(1, entry.remaining)) throw tooMany(Math.ceil(emissionMs / 1000));
    entry.inFlight++;
    return () => {
      entry.inFlight--;
    };
  }

  function counted(key: string, address: string, error: unknown, decisions: RateLimitDecision[]): never {
    const decision = decisions[0] as RateLimitDecision;
    if (!decision.allowed) return over(key, address, error, Math.max(1, decision.retryAfterSeconds));
    const now = clock();
    const entry = watch(key, now);
    entry.remaining = decision.remaining;
    entry.lastAt = now;
    // Admitted, and that was the last one the budget had: the next would be refused for at
    // most one emission interval. Remember that, so it costs no lookup.
    if (entry.remaining === 0) entry.until = now + emissionMs;
    throw error;
  }

  /** The store refused the count: the address is over its budget for `retryAfter` seconds. */
  function over(key: string, address: string, error: unknown, retryAfter: number): never {
    const now = clock();
    const entry = watch(key, now);
    entry.remaining = 0;
    entry.lastAt = now;
    entry.until = now + Math.max(retryAfter * 1000, emissionMs);
    overLog.failed('refused credentials', 'over', 'a client address is over its budget of refused credentials; answering 429', { clientAddress: address });
    throw tooMany(retryAfter);
  }

  /** The count failed (the fallback decides while the store fails, so hardly ever): the 401 stands. */
  function notCounted(error: unknown, failure: unknown): never {
    if (failure instanceof ConfigError) throw failure;
    throw error;
  }

  async function refused(address: string | undefined, error: unknown): Promise<never> {
    if (address === undefined || !isKeysetError(error) || error.code !== 'invalid_api_key') throw error;
    const key = refusalKey(address);
    watch(key, clock());
    let decisions: RateLimitDecision[];
    try {
      decisions = await decider.decide(`refused:${key}`, policy);
    } catch (failure) {
      return notCounted(error, failure);
    }
    return counted(key, address, error, decisions);
  }

  return Object.freeze({ admit, refused });
}
