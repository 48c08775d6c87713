import { parseRateLimit } from 'ratelimit-header-parser';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { headerFormats, rateLimitHeaders } from './rate-limit-headers.ts';
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

  const perSecond: RateLimitDecision = { allowed: true, policy: { limit: 10, windowSeconds: 1, name: 'second' }, remaining: 7, resetSeconds: 1, retryAfterSeconds: 0 };
  const perDay: RateLimitDecision = { allowed: true, policy: { limit: 10_000, windowSeconds: 86_400, name: 'day' }, remaining: 3, resetSeconds: 60_000, retryAfterSeconds: 0 };
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);

  it('draft-7: one combined RateLimit for the policy closest to exhaustion, every policy in RateLimit-Policy', () => {
    expect(rateLimitHeaders([perSecond, perDay], { headers: 'draft-7' })).toEqual({
      'ratelimit-policy': '10;w=1, 10000;w=86400',
      ratelimit: 'limit=10000, remaining=3, reset=60000',
    });
  });

  it('legacy: X-RateLimit-Limit/Remaining and an absolute X-RateLimit-Reset in Unix seconds', () => {
    expect(rateLimitHeaders(perSecond, { headers: 'legacy', now })).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '7',
      'x-ratelimit-reset': String(now / 1000 + 1),
    });
  });

  it('several formats at once; a refusal reports the refusing policy with the longest wait', () => {
    const refused: RateLimitDecision[] = [
      { ...perSecond, allowed: false, remaining: 0, retryAfterSeconds: 1 },
      { ...perDay, allowed: false, remaining: 0, resetSeconds: 86_400, retryAfterSeconds: 9 },
    ];
    const headers = rateLimitHeaders(refused, { headers: ['draft-11', 'legacy'], now });
    expect(headers).toMatchObject({
      'ratelimit-policy': '"second";q=10;w=1, "day";q=10000;w=86400',
      ratelimit: '"second";r=0;t=1, "day";r=0;t=86400',
      'x-ratelimit-limit': '10000',
      'x-ratelimit-remaining': '0',
      'retry-after': '9',
    });
  });

  it('ratelimit-header-parser (npm) reads the draft-7 and legacy headers as the numbers we meant', () => {
    const asHeaders = (record: Record<string, string>): Headers => new Headers(record);
    const draft7 = parseRateLimit(asHeaders(rateLimitHeaders([perSecond, perDay], { headers: 'draft-7' })));
    expect(draft7).toMatchObject({ limit: 10_000, remaining: 3, used: 9_997 });
    // Its reset is "now + reset seconds" on its own clock: within a few seconds of ours.
    expect(Math.abs(draft7!.reset!.getTime() - (Date.now() + 60_000_000))).toBeLessThan(5_000);

    const legacy = parseRateLimit(asHeaders(rateLimitHeaders(perSecond, { headers: 'legacy', now })));
    expect(legacy).toMatchObject({ limit: 10, remaining: 7, used: 3 });
    expect(legacy!.reset!.getTime()).toBe(now + 1000);

    // draft-11 is not a format it knows: it must not silently misread it as draft-7 numbers.
    const draft11 = parseRateLimit(asHeaders(rateLimitHeaders(perSecond)));
    expect(Number.isNaN(draft11?.limit)).toBe(true);
  });

  it('refuses unknown formats, an empty list, and draft-11 with draft-7 (same header names)', () => {
    expect(() => headerFormats(['draft-11', 'draft-7'])).toThrow(ConfigError);
    expect(() => headerFormats([])).toThrow(ConfigError);
    expect(() => headerFormats('draft-6' as never)).toThrow(ConfigError);
    expect(headerFormats(['legacy', 'draft-7'])).toEqual({ draft11: false, draft7: true, legacy: true });
  });
});
