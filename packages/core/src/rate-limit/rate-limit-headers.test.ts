import { describe, expect, it } from 'vitest';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RateLimitDecision } from './types.ts';

const allowed: RateLimitDecision = {
  allowed: true,
  policy: { limit: 100, windowSeconds: 60 },
  remaining: 99,
  resetSeconds: 1,
  retryAfterSeconds: 0,
};

describe('rateLimitHeaders', () => {
  it('renders RateLimit-Policy and RateLimit with the default policy name, lowercase', () => {
    expect(rateLimitHeaders(allowed)).toEqual({
      'ratelimit-policy': '"default";q=100;w=60',
      ratelimit: '"default";r=99;t=1',
    });
  });

  it('adds Retry-After to a refusal and uses the policy name', () => {
    const denied: RateLimitDecision = {
      allowed: false,
      policy: { limit: 10, windowSeconds: 1, name: 'per-second' },
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    };
    expect(rateLimitHeaders(denied)).toEqual({
      'ratelimit-policy': '"per-second";q=10;w=1',
      ratelimit: '"per-second";r=0;t=1',
      'retry-after': '1',
    });
  });

  it('lists every policy of a multi-pair decision and takes the longest Retry-After', () => {
    const headers = rateLimitHeaders([
      { allowed: false, policy: { limit: 2, windowSeconds: 1, name: 's' }, remaining: 0, resetSeconds: 1, retryAfterSeconds: 0 },
      { allowed: false, policy: { limit: 5, windowSeconds: 60, name: 'm' }, remaining: 0, resetSeconds: 60, retryAfterSeconds: 12 },
    ]);
    expect(headers).toEqual({
      'ratelimit-policy': '"s";q=2;w=1, "m";q=5;w=60',
      ratelimit: '"s";r=0;t=1, "m";r=0;t=60',
      'retry-after': '12',
    });
  });

  it('escapes a name as an RFC 9651 sf-string even if a custom store passes one through', () => {
    const headers = rateLimitHeaders({ ...allowed, policy: { limit: 1, windowSeconds: 1, name: 'a"b\\c' } });
    expect(headers['ratelimit-policy']).toBe('"a\\"b\\\\c";q=1;w=1');
  });
});
