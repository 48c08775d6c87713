import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitPolicy } from './types.ts';

// Failures print a seed and path: replay with fc.assert(..., { seed, path }).
const policyArb: fc.Arbitrary<RateLimitPolicy> = fc
  .record({
    limit: fc.integer({ min: 1, max: 30 }),
    windowSeconds: fc.integer({ min: 1, max: 20 }),
    burst: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
  })
  .map(({ limit, windowSeconds, burst }) => (burst === undefined ? { limit, windowSeconds } : { limit, windowSeconds, burst }));

/** Gaps in ms between consecutive requests: many zeros (bursts), some long pauses. */
const gapsArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 30_000 })), {
  minLength: 1,
  maxLength: 250,
});

function run(policy: RateLimitPolicy, gaps: readonly number[]): { times: number[]; admitted: number[] } {
  let now = 1_700_000_000_000;
  const store = createMemoryRateLimitStore({ clock: () => now });
  const times: number[] = [];
  const admitted: number[] = [];
  for (const gap of gaps) {
    now += gap;
    times.push(now);
    if (store.decide([{ key: 'k', policy }])[0]!.allowed) admitted.push(now);
  }
  return { times, admitted };
}

describe('GCRA properties (memory store)', () => {
  it('admits at most burst + rate · L in any interval of length L', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, (policy, gaps) => {
        const { admitted } = run(policy, gaps);
        const burst = policy.burst ?? policy.limit;
        for (let i = 0; i < admitted.length; i++) {
          for (let j = i; j < admitted.length; j++) {
            const lengthMs = admitted[j]! - admitted[i]!;
            const bound = burst + Math.floor((lengthMs * policy.limit) / (policy.windowSeconds * 1000));
            if (j - i + 1 > bound) return false;
          }
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('never refuses a client that keeps to the rate', () => {
    fc.assert(
      fc.property(policyArb, fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 100 }), (policy, extra) => {
        const interval = Math.ceil((policy.windowSeconds * 1000) / policy.limit);
        const { admitted, times } = run(policy, extra.map((e) => interval + e));
        return admitted.length === times.length;
      }),
      { numRuns: 200 },
    );
  });

  it('`remaining` more requests succeed now and the next one fails; waiting `retryAfterSeconds` succeeds', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, fc.integer({ min: 1, max: 5 }), (policy, gaps, cost) => {
        const burst = policy.burst ?? policy.limit;
        fc.pre(cost <= burst);
        let now = 1_700_000_000_000;
        const store = createMemoryRateLimitStore({ clock: () => now });
        for (const gap of gaps) {
          now += gap;
          const d = store.decide([{ key: 'k', policy }], cost)[0]!;
          if (d.allowed) {
            expect(d.retryAfterSeconds).toBe(0);
            expect(d.remaining).toBeGreaterThanOrEqual(0);
            expect(d.remaining).toBeLessThanOrEqual(burst - cost);
            expect(d.resetSeconds).toBeGreaterThanOrEqual(cost > 0 ? 1 : 0);
            // A cost-0 peek at the same instant reports the same remaining.
            expect(store.decide([{ key: 'k', policy }], 0)[0]!.remaining).toBe(d.remaining);
          } else {
            expect(d.remaining).toBe(0);
            expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
            const refusedAt = now;
            // One second earlier it would still be refused (the header is a ceiling)…
            now = refusedAt + (d.retryAfterSeconds - 1) * 1000;
            expect(store.decide([{ key: 'k', policy }], 0)[0]!.remaining).toBeLessThan(cost);
            // …and a client that waits the full Retry-After is admitted.
            now = refusedAt + d.retryAfterSeconds * 1000;
            expect(store.decide([{ key: 'k', policy }], cost)[0]!.allowed).toBe(true);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('after `remaining` is reported, exactly that many single requests are admitted at once', () => {
    fc.assert(
      fc.property(policyArb, gapsArb, (policy, gaps) => {
        let now = 1_700_000_000_000;
        const store = createMemoryRateLimitStore({ clock: () => now });
        for (const gap of gaps) {
          now += gap;
          store.decide([{ key: 'k', policy }]);
        }
        const { remaining } = store.decide([{ key: 'k', policy }], 0)[0]!;
        for (let i = 0; i < remaining; i++) expect(store.decide([{ key: 'k', policy }])[0]!.allowed).toBe(true);
        expect(store.decide([{ key: 'k', policy }])[0]!.allowed).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
