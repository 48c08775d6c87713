import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { evaluateGcra, gcraParameters } from './gcra.ts';
import { createMemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitPolicy } from './types.ts';

function fakeClock(start = 1_700_000_000_000): { clock: () => number; advance: (ms: number) => void } {
  let now = start;
  return { clock: () => now, advance: (ms) => (now += ms) };
}

const tenPerMinute: RateLimitPolicy = { limit: 10, windowSeconds: 60 };

describe('createMemoryRateLimitStore', () => {
  it('admits exactly `limit` of a burst of limit + k at one instant', () => {
    const { clock } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const results = Array.from({ length: 15 }, () => store.decide([{ key: 'a', policy: tenPerMinute }])[0]!);
    expect(results.filter((d) => d.allowed)).toHaveLength(10);
    expect(results.slice(0, 10).every((d) => d.allowed)).toBe(true);
    expect(results.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('reports remaining, reset and retry-after exactly', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const first = store.decide([{ key: 'a', policy: tenPerMinute }])[0]!;
    // T = 6 s: one request fills 6 s of the 60 s bucket.
    expect(first).toEqual({ allowed: true, policy: tenPerMinute, remaining: 9, resetSeconds: 6, retryAfterSeconds: 0 });
    for (let i = 0; i < 9; i++) store.decide([{ key: 'a', policy: tenPerMinute }]);
    const denied = store.decide([{ key: 'a', policy: tenPerMinute }])[0]!;
    expect(denied).toEqual({ allowed: false, policy: tenPerMinute, remaining: 0, resetSeconds: 60, retryAfterSeconds: 6 });
    advance(5_999);
    expect(store.decide([{ key: 'a', policy: tenPerMinute }])[0]).toMatchObject({ allowed: false, retryAfterSeconds: 1, resetSeconds: 55 });
    advance(1);
    expect(store.decide([{ key: 'a', policy: tenPerMinute }])[0]).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
  });

  it('restores one request per emission interval, and the full burst after a quiet window', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const policy: RateLimitPolicy = { limit: 4, windowSeconds: 1 }; // T = 250 ms
    const take = (): boolean => store.decide([{ key: 'a', policy }])[0]!.allowed;
    expect([take(), take(), take(), take(), take()]).toEqual([true, true, true, true, false]);
    advance(250);
    expect([take(), take()]).toEqual([true, false]);
    advance(1000);
    expect([take(), take(), take(), take(), take()]).toEqual([true, true, true, true, false]);
  });

  it('converges to limit/window over a long simulated period', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const policy: RateLimitPolicy = { limit: 7, windowSeconds: 3 }; // T not a whole ms: 428571.43 µs → 428572 µs
    let admitted = 0;
    const seconds = 24 * 3600; // one day, one attempt every 50 ms
    for (let t = 0; t < seconds * 20; t++) {
      if (store.decide([{ key: 'a', policy }])[0]!.allowed) admitted++;
      advance(50);
    }
    const exact = (seconds / 3) * 7; // 201,600
    // Never more than the burst above the rate; the µs rounding of T costs < 1 per 400k.
    expect(admitted).toBeLessThanOrEqual(exact + 7);
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(exact * (1 - 2e-6)) - 1);
  });

  it('honours burst separately from limit', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const policy: RateLimitPolicy = { limit: 60, windowSeconds: 60, burst: 3 }; // 1/s, 3 at once
    const take = (): boolean => store.decide([{ key: 'a', policy }])[0]!.allowed;
    expect([take(), take(), take(), take()]).toEqual([true, true, true, false]);
    advance(1000);
    expect([take(), take()]).toEqual([true, false]);
  });

  it('keeps keys apart and applies each key its own limit', () => {
    const { clock } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const count = (key: string, policy: RateLimitPolicy): number =>
      Array.from({ length: 50 }, () => store.decide([{ key, policy }])[0]!.allowed).filter(Boolean).length;
    expect(count('small', { limit: 3, windowSeconds: 60 })).toBe(3);
    expect(count('large', { limit: 20, windowSeconds: 60 })).toBe(20);
    expect(count('default', tenPerMinute)).toBe(10);
  });

  it('decides several pairs all-or-nothing: a refusal consumes nothing anywhere', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    const perSecond: RateLimitPolicy = { limit: 2, windowSeconds: 1, name: 'second' };
    const perMinute: RateLimitPolicy = { limit: 5, windowSeconds: 60, name: 'minute' };
    const both = [
      { key: 'id', policy: perSecond },
      { key: 'id', policy: perMinute },
    ];
    expect(store.decide(both).map((d) => d.allowed)).toEqual([true, true]);
    expect(store.decide(both).map((d) => d.remaining)).toEqual([0, 3]);
    const refused = store.decide(both);
    expect(refused.map((d) => d.allowed)).toEqual([false, false]);
    // Only the per-second pair refused; the per-minute one would have admitted.
    expect(refused.map((d) => d.retryAfterSeconds)).toEqual([1, 0]);
    advance(1000);
    // The refusal did not consume the per-minute quota: 3 are still left.
    expect(store.decide(both).map((d) => d.remaining)).toEqual([1, 2]);
    expect(store.decide(both).map((d) => d.remaining)).toEqual([0, 1]);
    advance(1000);
    expect(store.decide(both).map((d) => d.remaining)).toEqual([1, 0]);
    const minuteRefuses = store.decide(both);
    expect(minuteRefuses.map((d) => d.allowed)).toEqual([false, false]);
    expect(minuteRefuses[0]!.retryAfterSeconds).toBe(0);
    expect(minuteRefuses[1]!.retryAfterSeconds).toBe(10);
    // The per-second pair still has its one request left: the refusal consumed nothing.
    expect(store.decide([{ key: 'id', policy: perSecond }])[0]).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('supports a cost above one and a cost-0 peek', () => {
    const { clock } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    expect(store.decide([{ key: 'a', policy: tenPerMinute }], 4)[0]).toMatchObject({ allowed: true, remaining: 6, resetSeconds: 24 });
    expect(store.decide([{ key: 'a', policy: tenPerMinute }], 0)[0]).toMatchObject({ allowed: true, remaining: 6 });
    expect(store.decide([{ key: 'a', policy: tenPerMinute }], 7)[0]).toMatchObject({ allowed: false, retryAfterSeconds: 6 });
    expect(store.decide([{ key: 'a', policy: tenPerMinute }], 6)[0]).toMatchObject({ allowed: true, remaining: 0 });
    expect(() => store.decide([{ key: 'a', policy: tenPerMinute }], 11)).toThrow(ConfigError);
    expect(() => store.decide([{ key: 'a', policy: tenPerMinute }], 1.5)).toThrow(ConfigError);
  });

  it('rejects invalid input with a ConfigError', () => {
    const store = createMemoryRateLimitStore();
    const bad: unknown[] = [
      { limit: 0, windowSeconds: 1 },
      { limit: 1.5, windowSeconds: 1 },
      { limit: 1, windowSeconds: 0.5 },
      { limit: 1, windowSeconds: 400 * 86400 },
      { limit: 10, windowSeconds: 1, burst: 0 },
      { limit: 10, windowSeconds: 1, name: 'has space' },
      { limit: 10, windowSeconds: 1, name: '' },
      { limit: 2_000_000, windowSeconds: 1 },
      null,
    ];
    for (const policy of bad) expect(() => store.decide([{ key: 'a', policy: policy as RateLimitPolicy }])).toThrow(ConfigError);
    expect(() => store.decide([])).toThrow(ConfigError);
    expect(() => store.decide([{ key: 1 as unknown as string, policy: tenPerMinute }])).toThrow(ConfigError);
    expect(() => store.decide([{ key: 'a', policy: tenPerMinute }, { key: 'a', policy: { limit: 5, windowSeconds: 1 } }])).toThrow(/twice/);
    expect(() => createMemoryRateLimitStore({ max: 0 })).toThrow(ConfigError);
  });

  it('stays within `max` entries: 1,000,000 keys into a store of 10,000', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ max: 10_000, clock });
    let peak = 0;
    for (let i = 0; i < 1_000_000; i++) {
      store.decide([{ key: `k${i}`, policy: tenPerMinute }]);
      if (store.size > peak) peak = store.size;
      if (i % 1000 === 0) advance(1);
    }
    expect(peak).toBeLessThanOrEqual(10_000);
    expect(store.size).toBe(10_000);
  });

  it('drops least recently used entries first, in generations of max / 2', () => {
    const { clock } = fakeClock();
    const store = createMemoryRateLimitStore({ max: 4, clock });
    const take = (key: string): boolean => store.decide([{ key, policy: { limit: 1, windowSeconds: 60 } }])[0]!.allowed;
    expect([take('a'), take('b'), take('c')]).toEqual([true, true, true]); // young {c}, old {a, b}
    expect(take('a')).toBe(false); // a moves to the young generation
    expect(take('d')).toBe(true); // young full: {c, a} becomes old, b is dropped
    expect(store.size).toBe(3);
    expect(take('a')).toBe(false); // remembered
    expect(take('c')).toBe(false); // remembered
    expect(take('b')).toBe(true); // forgotten: a full bucket again
  });

  it('holds at most one entry with max 1', () => {
    const store = createMemoryRateLimitStore({ max: 1 });
    for (const key of ['a', 'b', 'c']) store.decide([{ key, policy: tenPerMinute }]);
    expect(store.size).toBe(1);
  });

  it('keeps a hot key remembered while many cold keys churn', () => {
    // What eviction costs is a benchmark's question, not a wall-clock budget here: a loaded
    // machine would miss one.
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ max: 1000, clock });
    const hot: RateLimitPolicy = { limit: 1_000_000, windowSeconds: 60 };
    let hotAdmitted = 0;
    for (let i = 0; i < 200_000; i++) {
      if (store.decide([{ key: 'hot', policy: hot }])[0]!.allowed) hotAdmitted++;
      store.decide([{ key: `cold${i}`, policy: tenPerMinute }]);
      if (i % 100 === 0) advance(1);
    }
    expect(hotAdmitted).toBe(200_000);
    // Remembered: TAT = 1 ms (the first request's credit lapsed) + 199,999 × 60 µs, now = 2 s,
    // so floor((60 s − 10.00094 s) / 60 µs) = 833,317 left. A forgotten key would show 1,000,000.
    expect(store.decide([{ key: 'hot', policy: hot }], 0)[0]!.remaining).toBe(833_317);
    expect(store.size).toBeLessThanOrEqual(1000);
  });

  it('drops entries whose TAT has passed instead of keeping them', () => {
    const { clock, advance } = fakeClock();
    const store = createMemoryRateLimitStore({ clock });
    store.decide([{ key: 'a', policy: tenPerMinute }]);
    expect(store.size).toBe(1);
    advance(6_000);
    store.decide([{ key: 'a', policy: tenPerMinute }], 0);
    expect(store.size).toBe(0);
  });
});

describe('createMemoryRateLimitStore single-pair fast path', () => {
  it('decides exactly as evaluateGcra over one stored TAT per (policy, key), whatever the sequence', () => {
    const policies: RateLimitPolicy[] = [
      { limit: 3, windowSeconds: 1 },
      { limit: 10, windowSeconds: 60, burst: 4, name: 'burst4' },
      { limit: 7, windowSeconds: 2, name: 'odd' },
    ];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ key: fc.constantFrom('a', 'b', 'c'), policy: fc.nat({ max: 2 }), cost: fc.nat({ max: 3 }), advanceMs: fc.nat({ max: 1500 }) }),
          { maxLength: 60 },
        ),
        (steps) => {
          const { clock, advance } = fakeClock();
          const store = createMemoryRateLimitStore({ clock });
          // Reference: the multi-pair code path's arithmetic, one TAT per (name, key), no eviction.
          const tats = new Map<string, number>();
          for (const { key, policy: index, cost, advanceMs } of steps) {
            advance(advanceMs);
            const policy = policies[index]!;
            const parameters = gcraParameters(policy);
            if (cost > parameters.burst) continue;
            const now = Math.round(clock() * 1000);
            const id = `${parameters.name}\n${key}`;
            const stored = tats.get(id);
            const outcome = evaluateGcra([{ parameters, tat: stored !== undefined && stored > now ? stored : undefined }], now, cost);
            if (outcome.allowed) tats.set(id, outcome.newTats[0]!);
            expect(store.decide([{ key, policy }], cost)).toEqual(outcome.decisions);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps one entry per (policy, key) and counts them in size', () => {
    const store = createMemoryRateLimitStore();
    store.decide([{ key: 'k', policy: tenPerMinute }]);
    store.decide([{ key: 'k', policy: { ...tenPerMinute, name: 'other' } }]);
    store.decide([{ key: 'k', policy: tenPerMinute }]);
    expect(store.size).toBe(2);
    store.clear();
    expect(store.size).toBe(0);
  });
});
