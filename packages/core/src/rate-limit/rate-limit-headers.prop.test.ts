import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateLimitHeaders } from './rate-limit-headers.ts';
import type { RateLimitDecision, RateLimitPolicy } from './types.ts';

/** The draft-11 text of one decision, written out from draft-ietf-httpapi-ratelimit-headers-11 and RFC 9651 §4.1.6. */
const reference = (d: RateLimitDecision) => {
  const name = `"${(d.policy.name ?? 'default').replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  return { 'ratelimit-policy': `${name};q=${d.policy.limit};w=${d.policy.windowSeconds}`, ratelimit: `${name};r=${d.remaining};t=${d.resetSeconds}` };
};

const policy = fc.record(
  { limit: fc.integer({ min: 1, max: 1e6 }), windowSeconds: fc.integer({ min: 1, max: 86_400 }), name: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), fc.string({ unit: fc.constantFrom('a', '"', '\\', '-'), minLength: 1, maxLength: 6 })) },
  { requiredKeys: ['limit', 'windowSeconds'] },
);

describe('rateLimitHeaders (draft-11, one policy), properties', () => {
  it('builds the reference text, for names that need escaping and a shared policy object changed in place too', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(policy, fc.nat(1e6), fc.nat(1e5), fc.boolean()), { minLength: 1, maxLength: 20 }), (steps) => {
        const shared: RateLimitPolicy = { limit: 1, windowSeconds: 1 };
        for (const [p, remaining, resetSeconds, inPlace] of steps) {
          let used: RateLimitPolicy = p;
          if (inPlace) {
            // The same object, other fields: the text follows the fields, never an earlier call.
            delete shared.name;
            Object.assign(shared, p);
            used = shared;
          }
          const decision: RateLimitDecision = { allowed: true, policy: used, remaining, resetSeconds, retryAfterSeconds: 0 };
          expect(rateLimitHeaders(decision)).toEqual(reference(decision));
          // A refusal adds Retry-After, never 0; one decision alone or in a list reads the same.
          const refused: RateLimitDecision = { allowed: false, policy: used, remaining: 0, resetSeconds, retryAfterSeconds: remaining % 5 };
          const expected = { ...reference(refused), 'retry-after': String(Math.max(1, remaining % 5)) };
          expect(Object.entries(rateLimitHeaders(refused))).toEqual(Object.entries(expected));
          expect(Object.entries(rateLimitHeaders([refused]))).toEqual(Object.entries(expected));
          expect(Object.entries(rateLimitHeaders([decision]))).toEqual(Object.entries(reference(decision)));
        }
      }),
    );
  });
});
