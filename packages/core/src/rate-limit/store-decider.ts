/**
 * GCRA decisions against a rate-limit store, with an explicit answer for a store that
 * fails or stays silent: `open` admits, `closed` refuses with 503 (never 429:
 * the client did nothing wrong), `local` decides in process until the store answers again.
 * `createRateLimiter` builds on it (policies, headers, quotas, decision events), and so
 * does the guard's budget of refused credentials, which needs the decisions and the outage
 * handling but none of the rest: a module of its own keeps the rest out of a bundle that
 * only uses the guard.
 * @module
 */
import { type Clock } from '../clock.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { createSilenceWatch } from '../internal/silence-timeout.ts';
import { enforcedAllowed, gcraParameters } from './gcra.ts';
import { createMemoryRateLimitStore, type MemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitDecision, RateLimitLogger, RateLimitPolicy, RateLimitRequest, RateLimitStore } from './types.ts';
import { errorLine } from '../internal/console-warn.ts';

/** What the limiter does while its store fails or times out. */
export type StoreErrorMode = 'open' | 'closed' | 'local';

/** Internal: what `createRateLimiter` (and the refused-credentials budget) pass; see `RateLimiterOptions`. */
export interface StoreDeciderOptions {
  /** @default createMemoryRateLimitStore({ clock }) */
  store: RateLimitStore | undefined;
  onStoreError: StoreErrorMode;
  timeoutMs: number;
  retryIntervalMs: number;
  clock: Clock;
  logger: RateLimitLogger;
}

/** Internal: not exported from the package. */
export interface StoreDecider {
  /**
   * One decision per policy, in order. Throws (or rejects with) 503 `unavailable` while
   * the store fails with `onStoreError: 'closed'`. The decisions come synchronously when
   * the store gives them so (the memory store), a promise only when it waits: awaiting
   * an answer already there costs the limiter a promise and a turn on every request.
   */
  decide(key: string, policies: RateLimitPolicy | readonly RateLimitPolicy[]): RateLimitDecision[] | Promise<RateLimitDecision[]>;
  /** `decide` for pairs of several keys (a key's and its owner's), all-or-nothing, one decision per pair in order. */
  decideAll(requests: readonly RateLimitRequest[]): RateLimitDecision[] | Promise<RateLimitDecision[]>;
  /**
   * The store decided `requests` within a larger step (`RequestStore.decideRequest`): it
   * answers, and the fallback counts what it admitted, as for `decideAll`'s answers.
   */
  answered(requests: readonly RateLimitRequest[], decisions: readonly RateLimitDecision[]): void;
  /** `'up'` while the store answers, else the failure mode in effect. */
  readonly state: 'up' | StoreErrorMode;
}

/** Validates the options (ConfigError) and creates the decider. */
export function createStoreDecider(options: StoreDeciderOptions): StoreDecider {
  const { onStoreError, timeoutMs, retryIntervalMs, clock, logger } = options;
  if (onStoreError !== 'open' && onStoreError !== 'closed' && onStoreError !== 'local') {
    throw new ConfigError(`onStoreError must be 'open', 'closed' or 'local', got ${JSON.stringify(onStoreError)}`);
  }
  for (const [name, value] of [['timeoutMs', timeoutMs], ['retryIntervalMs', retryIntervalMs]] as const) {
    if (!Number.isFinite(value) || value <= 0) throw new ConfigError(`${name} must be a positive number of milliseconds, got ${String(value)}`);
  }
  const store = options.store ?? createMemoryRateLimitStore({ clock });
  if (typeof store?.decide !== 'function') throw new ConfigError('store must implement decide(requests, cost)');

  let down = false;
  let retryAt = 0;
  let probing = false;
  // When the store last answered (performance.now()): a failure older than a success is
  // not an outage, the store is answering.
  let lastSuccessAt = Number.NEGATIVE_INFINITY;
  // One fallback store for the limiter's lifetime, never a fresh one per outage: a fresh
  // store would hand every key a new burst at each timeout.
  const local: MemoryRateLimitStore | undefined = onStoreError === 'local' ? createMemoryRateLimitStore({ clock }) : undefined;
  const watch = createSilenceWatch(timeoutMs, 'rate-limit store');

  function decide(key: string, p: RateLimitPolicy | readonly RateLimitPolicy[]): RateLimitDecision[] | Promise<RateLimitDecision[]> {
    return decideAll(Array.isArray(p) ? p.map((one: RateLimitPolicy) => ({ key, policy: one })) : [{ key, policy: p as RateLimitPolicy }]);
  }

  function decideAll(requests: readonly RateLimitRequest[]): RateLimitDecision[] | Promise<RateLimitDecision[]> {
    if (down && (probing || clock() < retryAt)) return fallback(requests);
    try {
      const answer = store.decide(requests, 1);
      // An answer now (the memory store) cannot be late: only a promise is timed.
      return Array.isArray(answer) ? checked(answer, requests.length) : awaited(answer, requests);
    } catch (error) {
      // Failed at once: no answer came meanwhile, so `lastSuccessAt` is before any time.
      return failed(error, requests, Infinity);
    }
  }

  /**
   * A store's pending answer, timed. When the decision counts as sent (for `failed`) is
   * read after the store's synchronous part, not before: a clock read costs ~0.15 µs,
   * and a store that answers at once (every request on the memory store) needs none. The
   * comparisons come out the same: `lastSuccessAt` changes only after an answer, which
   * cannot come while `store.decide` runs; nor can `down` change before this is called.
   */
  async function awaited(answer: Promise<RateLimitDecision[]>, requests: readonly RateLimitRequest[]): Promise<RateLimitDecision[]> {
    // A store that was down: this request is the one probe in flight.
    const probe = down;
    probing ||= probe;
    const askedAt = performance.now();
    try {
      const decisions = checked(await watch.wait(answer), requests.length);
      answered(requests, decisions);
      return decisions;
    } catch (error) {
      return failed(error, requests, askedAt);
    } finally {
      if (probe) probing = false;
    }
  }

  /** A shared store answered in time: the outage, if any, is over. */
  function answered(requests: readonly RateLimitRequest[], decisions: readonly RateLimitDecision[]): void {
    lastSuccessAt = performance.now();
    // Keep the fallback's count of this instance's admissions, so that it starts where
    // this instance stands, not with a full burst, if the store fails later.
    if (local !== undefined && enforcedAllowed(decisions)) local.decide(requests, 1);
    if (down) {
      down = false;
      logger.warn({ mode: onStoreError }, 'rate-limit store answers again');
    }
  }

  /** A store call that threw or rejected: the `onStoreError` answer (or the ConfigError it was). */
  function failed(error: unknown, requests: readonly RateLimitRequest[], askedAt: number): RateLimitDecision[] {
    if (error instanceof ConfigError) throw error;
    // Another decision was answered after this one was sent: the store is up (one slow or
    // failed reply is not an outage). Only this request uses the fallback.
    if (lastSuccessAt > askedAt) return fallback(requests, error);
    if (!down) logger.warn({ mode: onStoreError, error: errorLine(error) }, 'rate-limit store failed; using the onStoreError fallback');
    down = true;
    retryAt = clock() + retryIntervalMs;
    return fallback(requests, error);
  }

  function fallback(requests: readonly RateLimitRequest[], cause?: unknown): RateLimitDecision[] {
    if (local !== undefined) {
      return local.decide(requests, 1).map((d) => ({ ...d, degraded: 'local' as const }));
    }
    if (onStoreError === 'open') {
      return requests.map(({ policy: p }) => ({
        allowed: true,
        policy: p,
        remaining: gcraParameters(p).burst,
        resetSeconds: 0,
        retryAfterSeconds: 0,
        degraded: 'open' as const,
      }));
    }
    throw new KeysetError('unavailable', {
      detail: 'Rate limiting is temporarily unavailable; retry shortly.',
      cause,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryIntervalMs / 1000))) },
    });
  }

  return Object.freeze({
    decide,
    decideAll,
    answered,
    get state(): 'up' | StoreErrorMode {
      return down ? onStoreError : 'up';
    },
  });
}

function checked(decisions: readonly RateLimitDecision[], expected: number): RateLimitDecision[] {
  if (decisions.length !== expected || decisions[0] === undefined) throw new Error('rate-limit store returned a wrong number of decisions');
  return decisions as RateLimitDecision[];
}

