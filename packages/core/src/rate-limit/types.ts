/**
 * Contracts of the rate-limit area, shared by the core limiter, the memory store,
 * `@keyset/redis` and the API-key guard.
 * @module
 */

/** A GCRA policy: `limit` requests per `windowSeconds`, with up to `burst` at once. */
export interface RateLimitPolicy {
  /** Requests allowed per window. Positive integer. */
  limit: number;
  /** Window length in seconds. Positive. */
  windowSeconds: number;
  /**
   * Requests that may arrive at once after a quiet period.
   * @default limit
   */
  burst?: number;
  /**
   * Name shown in the `RateLimit-Policy` / `RateLimit` headers.
   * @default 'default'
   */
  name?: string;
}

/** One (key, policy) pair to decide; several are decided all-or-nothing. */
export interface RateLimitRequest {
  key: string;
  policy: RateLimitPolicy;
}

/** The outcome for one (key, policy) pair. */
export interface RateLimitDecision {
  allowed: boolean;
  policy: RateLimitPolicy;
  /** Requests still allowed right now after this one (0 when denied). */
  remaining: number;
  /** Seconds until the bucket is full again (the `t` of the `RateLimit` header). */
  resetSeconds: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterSeconds: number;
  /**
   * Set when the limiter's store failed and the `onStoreError` fallback decided instead:
   * `'local'` (an in-process memory store) or `'open'` (admitted uncounted).
   */
  degraded?: 'local' | 'open';
}

/**
 * Where GCRA state lives. `decide` is all-or-nothing: if any pair is denied, no pair
 * consumes anything. Stores may answer synchronously (memory) or asynchronously (Redis).
 */
export interface RateLimitStore {
  decide(requests: readonly RateLimitRequest[], cost?: number): RateLimitDecision[] | Promise<RateLimitDecision[]>;
  close?(): Promise<void>;
}

/** What the API-key guard needs from a limiter. */
export interface RateLimiter {
  /**
   * Decides one request for `key` under `policy` (the limiter's default when omitted).
   * Resolves with the response headers to send; rejects with a `KeysetError`
   * `rate_limited` (429, `Retry-After`) or `unavailable` (503).
   */
  check(key: string, policy?: RateLimitPolicy): Promise<{ decision: RateLimitDecision; headers: Record<string, string> }>;
  readonly defaultPolicy: RateLimitPolicy;
}
