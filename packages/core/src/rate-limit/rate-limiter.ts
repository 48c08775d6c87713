/**
 * The limiter the API-key guard calls: one decision per request against a store, turned
 * into response headers or a 429 problem, with an explicit answer for a store that fails
 * (DESIGN §4): `open` admits, `closed` refuses with 503 (never 429: the client did nothing
 * wrong), `local` decides in process until the store answers again.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { createSilenceWatch } from '../internal/silence-timeout.ts';
import { gcraParameters, rateLimitPolicyProblem } from './gcra.ts';
import { createMemoryRateLimitStore, type MemoryRateLimitStore } from './memory-store.ts';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitStore, RateLimiter } from './types.ts';

/** What the limiter does while its store fails or times out. */
export type StoreErrorMode = 'open' | 'closed' | 'local';

/** Where the limiter reports store outages and ignored policies. pino and `console` fit. */
export interface RateLimitLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `createRateLimiter`. */
export interface RateLimiterOptions {
  /**
   * Where GCRA state lives.
   * @default createMemoryRateLimitStore({ clock })
   */
  store?: RateLimitStore;
  /** Policy for keys without their own (`check(key)` with no policy). */
  defaultPolicy: RateLimitPolicy;
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

/** A limiter that also exposes how it is doing. */
export interface RateLimiterWithState extends RateLimiter {
  /** `'up'` while the store answers, else the failure mode in effect. */
  readonly storeState: 'up' | StoreErrorMode;
}

const consoleLogger: RateLimitLogger = {
  warn: (details, message) => console.warn(`[keyset] ${message}`, details),
};

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
  const {
    defaultPolicy,
    onStoreError = 'local',
    timeoutMs = 1000,
    retryIntervalMs = 1000,
    clock = systemClock,
    logger = consoleLogger,
  } = options;
  if (defaultPolicy === undefined) throw new ConfigError('createRateLimiter needs a defaultPolicy { limit, windowSeconds }');
  const problem = rateLimitPolicyProblem(defaultPolicy);
  if (problem !== undefined) throw new ConfigError(`defaultPolicy is invalid: ${problem}`);
  if (onStoreError !== 'open' && onStoreError !== 'closed' && onStoreError !== 'local') {
    throw new ConfigError(`onStoreError must be 'open', 'closed' or 'local', got ${JSON.stringify(onStoreError)}`);
  }
  for (const [name, value] of [['timeoutMs', timeoutMs], ['retryIntervalMs', retryIntervalMs]] as const) {
    if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  const policy = Object.freeze({ ...defaultPolicy });
  const store = options.store ?? createMemoryRateLimitStore({ clock });
  if (typeof store?.decide !== 'function') throw new ConfigError('store must implement decide(requests, cost)');

  let down = false;
  let retryAt = 0;
  let probing = false;
  // When the store last answered (performance.now()): a failure older than a success is
  // not an outage, the store is answering.
  let lastSuccessAt = Number.NEGATIVE_INFINITY;
  // One fallback store for the limiter's lifetime, never a fresh one per outage: a fresh
  // store would hand every key a new burst at each timeout (issue 9, item 3).
  const local: MemoryRateLimitStore | undefined = onStoreError === 'local' ? createMemoryRateLimitStore({ clock }) : undefined;
  const watch = createSilenceWatch(timeoutMs, 'rate-limit store');
  const reported = new WeakSet<object>();

  function resolvePolicy(key: string, candidate: RateLimitPolicy | undefined | null): RateLimitPolicy {
    if (candidate === undefined || candidate === null) return policy;
    const why = rateLimitPolicyProblem(candidate);
    if (why === undefined) return candidate;
    if (typeof candidate === 'object' && !reported.has(candidate)) {
      reported.add(candidate);
      logger.warn({ key, problem: why }, 'ignoring an invalid per-key rate-limit policy; using the default policy');
    }
    return policy;
  }

  async function decide(key: string, p: RateLimitPolicy): Promise<RateLimitDecision> {
    if (down && (probing || clock() < retryAt)) return fallback(key, p);
    const probe = down;
    if (probe) probing = true;
    const askedAt = performance.now();
    try {
      const answer = store.decide([{ key, policy: p }], 1);
      if (Array.isArray(answer)) return first(answer);
      const decision = first(await watch.wait(answer));
      lastSuccessAt = performance.now();
      // Keep the fallback's count of this instance's admissions, so that it starts where
      // this instance stands, not with a full burst, if the store fails later.
      if (local !== undefined && decision.allowed) local.decide([{ key, policy: p }], 1);
      if (down) {
        down = false;
        logger.warn({ mode: onStoreError }, 'rate-limit store answers again');
      }
      return decision;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      // Another decision was answered after this one was sent: the store is up (one slow or
      // failed reply is not an outage). Only this request uses the fallback.
      if (lastSuccessAt > askedAt) return fallback(key, p, error);
      if (!down) logger.warn({ mode: onStoreError, error: describe(error) }, 'rate-limit store failed; using the onStoreError fallback');
      down = true;
      retryAt = clock() + retryIntervalMs;
      return fallback(key, p, error);
    } finally {
      if (probe) probing = false;
    }
  }

  function fallback(key: string, p: RateLimitPolicy, cause?: unknown): RateLimitDecision {
    if (local !== undefined) {
      return { ...(local.decide([{ key, policy: p }], 1)[0] as RateLimitDecision), degraded: 'local' };
    }
    if (onStoreError === 'open') {
      const { burst } = gcraParameters(p);
      return { allowed: true, policy: p, remaining: burst, resetSeconds: 0, retryAfterSeconds: 0, degraded: 'open' };
    }
    throw new KeysetError('unavailable', {
      detail: 'Rate limiting is temporarily unavailable; retry shortly.',
      cause,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryIntervalMs / 1000))) },
    });
  }

  return Object.freeze({
    defaultPolicy: policy,
    get storeState(): 'up' | StoreErrorMode {
      return down ? onStoreError : 'up';
    },
    async check(key: string, keyPolicy?: RateLimitPolicy): Promise<{ decision: RateLimitDecision; headers: Record<string, string> }> {
      if (typeof key !== 'string') throw new ConfigError(`A rate-limit key must be a string, got ${typeof key}`);
      const decision = await decide(key, resolvePolicy(key, keyPolicy));
      // Fail-open admits without knowing the counts: send no numbers rather than made-up ones.
      const headers = decision.degraded === 'open' ? {} : rateLimitHeaders(decision);
      if (decision.allowed) return { decision, headers };
      throw new KeysetError('rate_limited', {
        detail: `Rate limit exceeded; retry in ${headers['retry-after'] ?? '1'} s.`,
        headers,
        extensions: { retry_after: Number(headers['retry-after'] ?? '1') },
      });
    },
  });
}

function first(decisions: readonly RateLimitDecision[]): RateLimitDecision {
  const decision = decisions[0];
  if (decision === undefined) throw new Error('rate-limit store returned no decision');
  return decision;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
