/**
 * Response headers for rate-limit decisions, in the formats clients read:
 *
 * - `draft-11` (default), per draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy`
 *   names each quota policy (`q` quota, `w` window in seconds) and `RateLimit` reports it
 *   now (`r` remaining, `t` seconds until the quota is fully restored), both as Structured
 *   Field lists (RFC 9651) keyed by the policy name as an sf-string; several policies are
 *   several list members.
 * - `draft-7`, per draft-ietf-httpapi-ratelimit-headers-07 as express-rate-limit and
 *   `ratelimit-header-parser` read it: one combined `RateLimit: limit=…, remaining=…,
 *   reset=…` for the policy closest to exhaustion, and `RateLimit-Policy: 100;w=60, …`
 *   listing every policy.
 * - `legacy`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (Unix
 *   epoch seconds, as GitHub and express-rate-limit send it) for the policy closest to
 *   exhaustion.
 *
 * `draft-11` and `draft-7` share the header names, so they cannot be sent together;
 * `legacy` combines with either. `Retry-After` (RFC 9110 §10.2.3) goes with a refusal.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { RateLimitDecision } from './types.ts';

/** A header format; see the module comment. */
export type RateLimitHeaderFormat = 'draft-11' | 'draft-7' | 'legacy';

/** Options of `rateLimitHeaders`. */
export interface RateLimitHeaderOptions {
  /**
   * Format or formats to send.
   * @default 'draft-11'
   */
  headers?: RateLimitHeaderFormat | readonly RateLimitHeaderFormat[] | HeaderFormats;
  /**
   * Now, in epoch ms, for the absolute `X-RateLimit-Reset` of `legacy`.
   * @default Date.now()
   */
  now?: number;
}

/** Which formats a `headers` option selects. */
export interface HeaderFormats {
  readonly draft11: boolean;
  readonly draft7: boolean;
  readonly legacy: boolean;
}

const DRAFT_11_ONLY: HeaderFormats = Object.freeze({ draft11: true, draft7: false, legacy: false });

/**
 * Validates a `headers` option and resolves it. Throws `ConfigError` for an unknown
 * format, an empty list, or `draft-11` with `draft-7` (both use `RateLimit`).
 *
 * @example
 * ```ts
 * headerFormats(['draft-7', 'legacy']); // { draft11: false, draft7: true, legacy: true }
 * ```
 */
export function headerFormats(option: RateLimitHeaderFormat | readonly RateLimitHeaderFormat[] | undefined): HeaderFormats {
  if (option === undefined || option === 'draft-11') return DRAFT_11_ONLY;
  const list: readonly unknown[] = Array.isArray(option) ? option : [option];
  if (list.length === 0) throw new ConfigError("headers must name at least one format: 'draft-11', 'draft-7' or 'legacy'");
  for (const format of list) {
    if (format !== 'draft-11' && format !== 'draft-7' && format !== 'legacy') {
      throw new ConfigError(`headers: unknown format ${JSON.stringify(format)}; use 'draft-11', 'draft-7' or 'legacy'`);
    }
  }
  const formats = { draft11: list.includes('draft-11'), draft7: list.includes('draft-7'), legacy: list.includes('legacy') };
  if (formats.draft11 && formats.draft7) {
    throw new ConfigError("headers: 'draft-11' and 'draft-7' both use the RateLimit and RateLimit-Policy headers; pick one (either may go with 'legacy')");
  }
  return Object.freeze(formats);
}

/**
 * Header record (lowercase names) for one decision, or for every pair of a multi-policy
 * decision (one list member per policy; `retry-after` is the longest wait).
 *
 * @example
 * ```ts
 * rateLimitHeaders(decision);
 * // { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=1' }
 * rateLimitHeaders(decision, { headers: ['draft-7', 'legacy'] });
 * // { 'ratelimit-policy': '100;w=60', ratelimit: 'limit=100, remaining=99, reset=1', 'x-ratelimit-limit': '100', … }
 * ```
 */
export function rateLimitHeaders(
  decision: RateLimitDecision | readonly RateLimitDecision[],
  options?: RateLimitHeaderOptions,
): Record<string, string> {
  const option = options?.headers;
  const formats = typeof option === 'object' && option !== null && 'draft11' in option ? option : headerFormats(option);
  const decisions: readonly RateLimitDecision[] = Array.isArray(decision) ? decision : [decision as RateLimitDecision];
  const headers: Record<string, string> = {};
  let denied = false;
  let retryAfter = 0;
  for (const d of decisions) {
    if (!d.allowed) denied = true;
    if (d.retryAfterSeconds > retryAfter) retryAfter = d.retryAfterSeconds;
  }
  if (formats.draft11) {
    // One list member per policy, keyed by its name as an sf-string.
    let policies = '';
    let states = '';
    for (const d of decisions) {
      const name = sfString(d.policy.name ?? 'default');
      const sep = policies === '' ? '' : ', ';
      policies += `${sep}${name};q=${d.policy.limit};w=${d.policy.windowSeconds}`;
      states += `${sep}${name};r=${d.remaining};t=${d.resetSeconds}`;
    }
    headers['ratelimit-policy'] = policies;
    headers.ratelimit = states;
  }
  if (formats.draft7 || formats.legacy) {
    const tightest = closestToExhaustion(decisions);
    if (formats.draft7) {
      headers['ratelimit-policy'] = decisions.map((d) => `${d.policy.limit};w=${d.policy.windowSeconds}`).join(', ');
      headers.ratelimit = `limit=${tightest.policy.limit}, remaining=${tightest.remaining}, reset=${tightest.resetSeconds}`;
    }
    if (formats.legacy) {
      const now = options?.now ?? Date.now();
      headers['x-ratelimit-limit'] = String(tightest.policy.limit);
      headers['x-ratelimit-remaining'] = String(tightest.remaining);
      headers['x-ratelimit-reset'] = String(Math.ceil(now / 1000) + tightest.resetSeconds);
    }
  }
  // A refusal always says when to come back, and never "0" (which invites a hot loop).
  if (denied) headers['retry-after'] = String(Math.max(1, retryAfter));
  return headers;
}

/**
 * Internal (not exported from the package). The one policy single-policy formats report: on a refusal the one with the longest
 * wait, else the one with the fewest requests left (ties: the later reset).
 */
export function closestToExhaustion(decisions: readonly RateLimitDecision[]): RateLimitDecision {
  let best = decisions[0] as RateLimitDecision;
  for (const d of decisions) {
    if (d.retryAfterSeconds !== best.retryAfterSeconds) {
      if (d.retryAfterSeconds > best.retryAfterSeconds) best = d;
    } else if (d.remaining < best.remaining || (d.remaining === best.remaining && d.resetSeconds > best.resetSeconds)) {
      best = d;
    }
  }
  return best;
}

/** RFC 9651 §4.1.6 sf-string: quoted, with `"` and `\` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}
