/**
 * The memory store (TATs in one array per generation) against the store as it was
 * (memory-store.reference.test-support.ts): random runs of decisions — one pair through
 * `decide` (a step of its own, and as a single-policy limiter asks), several pairs at once, peeks, costs past
 * the burst, a pair named twice — with the clock moving and `clear` between them, on
 * stores small enough that generations turn over all the time. After every step both
 * answer the same decisions (or throw the same error) and hold the same number of entries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore, type MemoryRateLimitStore } from './memory-store.ts';
import { createReferenceMemoryRateLimitStore } from './memory-store.reference.test-support.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest } from './types.ts';

const POLICIES: readonly RateLimitPolicy[] = [
  Object.freeze({ limit: 3, windowSeconds: 1 }),
  Object.freeze({ limit: 5, windowSeconds: 10, name: 'ten' }),
  Object.freeze({ limit: 60, windowSeconds: 60, burst: 2, name: 'steady' }),
  { limit: 2, windowSeconds: 3, name: 'default' },
];
const KEYS = ['a', 'b', 'c', 'd', 'e', 'key_f', ''];

type Step =
  | { kind: 'one'; key: number; policy: number; cost: number }
  | { kind: 'pair'; key: number; policy: number; cost: number }
  | { kind: 'many'; pairs: { key: number; policy: number }[]; cost: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'clear' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('one' as const), key: fc.nat(KEYS.length - 1), policy: fc.nat(POLICIES.length - 1), cost: fc.nat(3) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('pair' as const), key: fc.nat(KEYS.length - 1), policy: fc.nat(POLICIES.length - 1), cost: fc.nat(3) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('many' as const),
      pairs: fc.array(fc.record({ key: fc.nat(KEYS.length - 1), policy: fc.nat(POLICIES.length - 1) }), { minLength: 0, maxLength: 3 }),
      cost: fc.nat(2),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.nat(400), fc.nat(70_000)) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

type Outcome = { decisions: RateLimitDecision[] } | { error: string };

function outcome(run: () => RateLimitDecision[]): Outcome {
  try {
    return { decisions: run() };
  } catch (err) {
    return { error: `${(err as Error).constructor.name}: ${(err as Error).message}` };
  }
}

/** One pair decided through `decide`, as the limiter asks for a single-policy key. */
type DecideOne = (key: string, policy: RateLimitPolicy, cost: number) => RateLimitDecision[];
const oneOf = (store: MemoryRateLimitStore): DecideOne => (key, policy, cost) => store.decide([{ key, policy }], cost);

function apply(store: MemoryRateLimitStore, single: DecideOne, s: Step): Outcome | undefined {
  switch (s.kind) {
    case 'one':
      return outcome(() => store.decide([{ key: KEYS[s.key] as string, policy: POLICIES[s.policy] as RateLimitPolicy }], s.cost));
    case 'pair':
      return outcome(() => single(KEYS[s.key] as string, POLICIES[s.policy] as RateLimitPolicy, s.cost));
    case 'many': {
      const requests: RateLimitRequest[] = s.pairs.map((p) => ({ key: KEYS[p.key] as string, policy: POLICIES[p.policy] as RateLimitPolicy }));
      return outcome(() => store.decide(requests, s.cost));
    }
    case 'clear':
      store.clear();
      return undefined;
    case 'advance':
      return undefined;
  }
}

/** A store and the reference store over one clock, with one-pair deciders. */
function storeAndReference(max: number, clock: () => number) {
  const store = createMemoryRateLimitStore({ max, clock });
  const reference = createReferenceMemoryRateLimitStore({ max, clock });
  const single = oneOf(store);
  const referenceSingle = oneOf(reference);
  return { store, reference, single, referenceSingle };
}

describe('memory store against the reference (cells per key)', () => {
  it('answers and holds the same at every step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.array(step, { maxLength: 120, size: "max" }), (max, steps) => {
        let now = 1_700_000_000_000;
        const clock = (): number => now;
        const store = createMemoryRateLimitStore({ max, clock });
        const reference = createReferenceMemoryRateLimitStore({ max, clock });
        const single = oneOf(store);
        const referenceSingle = oneOf(reference);
        for (const s of steps) {
          if (s.kind === 'advance') now += s.ms;
          expect(apply(store, single, s)).toEqual(apply(reference, referenceSingle, s));
          expect(store.size).toBe(reference.size);
        }
      }),
      { numRuns: 1500 },
    );
  });

  // Enough keys that a generation's array grows (past 64 slots) and turns over.
  it('answers the same for many keys through several generations', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 700 }), fc.array(fc.tuple(fc.nat(249), fc.nat(3), fc.nat(4)), { minLength: 300, maxLength: 1500 }), (max, calls) => {
        let now = 1_700_000_000_000;
        const clock = (): number => now;
        const { store, reference, single, referenceSingle } = storeAndReference(max, clock);
        for (const [key, policy, ms] of calls) {
          now += ms;
          const p = POLICIES[policy] as RateLimitPolicy;
          expect(single(`k${key}`, p, 1)).toEqual(referenceSingle(`k${key}`, p, 1));
          expect(store.size).toBe(reference.size);
        }
      }),
      { numRuns: 100 },
    );
  });
  // Working sets around the store's size, each key coming back while its generation still
  // holds it, over thousands of decisions: arrays grow past 64 slots, are handed to the next
  // young generation and have freed slots reused. (fast-check's default sizes keep arrays to
  // ten elements, which never grows a generation: a growth that lost the old values passed.)
  it('answers the same for working sets around the store size, as arrays grow and are handed over', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.double({ min: 0.2, max: 2.5, noNaN: true }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.constantFrom(0, 1, 5, 50), (max, ratio, seed, tick) => {
        const working = Math.max(1, Math.round(max * ratio));
        let now = 1_700_000_000_000;
        const clock = (): number => now;
        const { store, reference, single, referenceSingle } = storeAndReference(max, clock);
        let r = seed;
        const rand = (n: number): number => {
          r = (Math.imul(r, 1103515245) + 12345) >>> 0;
          return (r >>> 8) % n;
        };
        for (let k = 0; k < 2500; k++) {
          const key = `w${rand(working)}`;
          const policy = POLICIES[rand(POLICIES.length)] as RateLimitPolicy;
          const cost = rand(4);
          const how = rand(10);
          if (how < 4) {
            expect(outcome(() => single(key, policy, cost))).toEqual(outcome(() => referenceSingle(key, policy, cost)));
          } else if (how < 8) {
            expect(outcome(() => store.decide([{ key, policy }], cost))).toEqual(outcome(() => reference.decide([{ key, policy }], cost)));
          } else {
            const requests: RateLimitRequest[] = [
              { key, policy },
              { key: `w${rand(working)}`, policy: POLICIES[rand(POLICIES.length)] as RateLimitPolicy },
            ];
            expect(outcome(() => store.decide(requests, cost))).toEqual(outcome(() => reference.decide(requests, cost)));
          }
          expect(store.size).toBe(reference.size);
          if (rand(3) === 0) now += tick;
        }
      }),
      { numRuns: 60 },
    );
  });
});
