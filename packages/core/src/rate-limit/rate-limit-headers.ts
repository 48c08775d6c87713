/**
 * Response headers for rate-limit decisions, per draft-ietf-httpapi-ratelimit-headers-11:
 * `RateLimit-Policy` names each quota policy (`q` quota, `w` window in seconds) and
 * `RateLimit` reports it now (`r` remaining, `t` seconds until the quota is fully
 * restored), both as Structured Field lists (RFC 9651) keyed by the policy name as an
 * sf-string. `Retry-After` (RFC 9110 §10.2.3) goes with a refusal.
 * @module
 */
import type { RateLimitDecision } from './types.ts';

/**
 * Header record (lowercase names) for one decision, or for every pair of a multi-policy
 * decision (one list member per policy; `retry-after` is the longest wait).
 *
 * @example
 * ```ts
 * rateLimitHeaders(decision);
 * // { 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=99;t=1' }
 * ```
 */
export function rateLimitHeaders(decision: RateLimitDecision | readonly RateLimitDecision[]): Record<string, string> {
  const decisions: readonly RateLimitDecision[] = Array.isArray(decision) ? decision : [decision as RateLimitDecision];
  const policies: string[] = [];
  const states: string[] = [];
  let denied = false;
  let retryAfter = 0;
  for (const d of decisions) {
    const name = sfString(d.policy.name ?? 'default');
    policies.push(`${name};q=${d.policy.limit};w=${d.policy.windowSeconds}`);
    states.push(`${name};r=${d.remaining};t=${d.resetSeconds}`);
    if (!d.allowed) denied = true;
    retryAfter = Math.max(retryAfter, d.retryAfterSeconds);
  }
  const headers: Record<string, string> = {
    'ratelimit-policy': policies.join(', '),
    ratelimit: states.join(', '),
  };
  // A refusal always says when to come back, and never "0" (which invites a hot loop).
  if (denied) headers['retry-after'] = String(Math.max(1, retryAfter));
  return headers;
}

/** RFC 9651 §4.1.6 sf-string: quoted, with `"` and `\` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
