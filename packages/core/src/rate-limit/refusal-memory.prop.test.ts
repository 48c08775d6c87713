/**
 * The refusal memory of a limiter over a `RequestStore`: two instances share one store
 * (a model of the Redis request script: GCRA by the store's clock, quotas as integers),
 * under any interleaving of their requests (two keys of one owner, two routes of
 * different costs), of time passing, of store calls that take time to arrive, and of
 * administrator changes (new limits or quota on a key or the owner, which the keyring
 * hands out as new objects on every instance before the change returns). At every
 * request, what the store would answer at that moment is read from a copy of its state
 * (the oracle), and:
 *
 * - a request answered without a store call is one the store would refuse: `rate_limited`
 *   only when the store would say so too, with a `Retry-After` no later than the store's;
 *   `quota_exhausted` naming the same quota when the store says so (it may say
 *   `rate_limited` instead when the limits run out within the round trip a call takes);
 * - a request admitted was admitted by a store call (nothing is admitted from memory).
 *
 * And the memory works: refusals answered without a store call happen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError, type KeysetError } from '../errors.ts';
import type { Quota, QuotaSpend, QuotaStoreResult } from '../quota/types.ts';
import { evaluateGcra, prepareGcra } from './gcra.ts';
import { createRateLimiter } from './rate-limiter.ts';
import type { RequestDecisionInput, RequestDecisionOutput, RequestStore } from './request-store.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest } from './types.ts';

const START = Date.UTC(2026, 0, 1);

/** The shared store, as the Redis request script decides (without leases: none are claimed here). */
interface ModelStore extends RequestStore {
  calls: number;
  copy(): ModelStore;
}

function modelStore(time: { now: number; latency: number }, tats = new Map<string, number>(), counts = new Map<string, { g: number; p: number; r: number }>()): ModelStore {
  const idOf = (r: RateLimitRequest, name: string): string => `${r.partition ?? r.key}|${r.key}|${name}`;

  function decideRequest({ limits, quotas }: RequestDecisionInput): RequestDecisionOutput {
    store.calls += 1;
    // The call reaches the store some time after the instance read its clock.
    time.now += time.latency;
    const now = time.now * 1000;
    const parameters = prepareGcra(limits, 1);
    const stored = limits.map((r, i) => tats.get(idOf(r, parameters[i]!.name)) ?? 0);
    const outcome = evaluateGcra(parameters.map((p, i) => ({ parameters: p, tat: stored[i]! > now ? stored[i] : undefined })), now, 1);
    if (!outcome.allowed) return { limits: outcome.decisions, leaseRefused: -1, quotas: undefined, nowMicros: now, tats: stored };
    limits.forEach((r, i) => tats.set(idOf(r, parameters[i]!.name), outcome.newTats[i]!));
    if (quotas.length === 0) return { limits: outcome.decisions, leaseRefused: -1, quotas: undefined, nowMicros: now, tats: stored };
    return { limits: outcome.decisions, leaseRefused: -1, quotas: spendAll(quotas), nowMicros: now, tats: stored };
  }

  function spendAll(quotas: readonly QuotaSpend[]): QuotaStoreResult[] {
    const states = quotas.map((q) => {
      const s = counts.get(q.key);
      if (s === undefined || s.g < q.generation) return { g: q.generation, p: q.period, r: q.initial };
      if (s.g === q.generation && q.refillAmount !== null && q.period > s.p) return { g: s.g, p: q.period, r: q.refillAmount };
      return { ...s };
    });
    const all = quotas.every((q, i) => q.cost <= states[i]!.r);
    return quotas.map((q, i) => {
      const s = states[i]!;
      const allowed = q.cost <= s.r;
      if (all) s.r -= q.cost;
      counts.set(q.key, s);
      return { allowed, remaining: s.r };
    });
  }

  const unused = (): never => {
    throw new Error('not used: every decision here is one step');
  };
  const store: ModelStore = {
    calls: 0,
    decideRequest,
    releaseLeases: () => {},
    decide: (requests: readonly RateLimitRequest[]): RateLimitDecision[] => unused(),
    spend: unused,
    spendAll: (requests: readonly QuotaSpend[]) => spendAll(requests),
    acquire: unused,
    release: unused,
    copy: () => modelStore({ now: time.now, latency: 0 }, new Map(tats), new Map([...counts].map(([k, v]) => [k, { ...v }]))),
  };
  return store;
}

const policy = fc.record({ limit: fc.integer({ min: 1, max: 3 }), windowSeconds: fc.integer({ min: 1, max: 8 }), name: fc.constant('p') });
const quota = fc.record({
  remaining: fc.integer({ min: 0, max: 4 }),
  refill: fc.option(fc.record({ amount: fc.integer({ min: 1, max: 3 }), interval: fc.integer({ min: 3, max: 12 }) }), { nil: null }),
});

const step = fc.oneof(
  { weight: 14, arbitrary: fc.record({ kind: fc.constant('request' as const), instance: fc.nat(1), key: fc.nat(1), cost: fc.constantFrom(1, 2), latency: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('limits' as const), key: fc.nat(2), policy }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('quota' as const), key: fc.nat(2), quota }) },
);

interface Settings {
  policies: RateLimitPolicy | null;
  quota: Quota | null;
}

function outcomeOf(error: unknown): KeysetError {
  if (!isKeysetError(error)) throw error;
  return error;
}

describe('the refusal memory of a limiter over a shared request store', () => {
  it('never refuses what the store would admit, never admits what it would refuse, under two instances and admin changes', async () => {
    let remembered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -2000, max: 2000 }),
        fc.array(step, { minLength: 1, maxLength: 80 }),
        async (skew, steps) => {
          const time = { now: START, latency: 0 };
          const store = modelStore(time);
          // Both instances read one clock, `skew` ms off the store's (quota periods are
          // counted by each instance's clock: see docs/rate-limits.md).
          const clock = (): number => time.now + skew;
          const defaultPolicy = { limit: 2, windowSeconds: 5 };
          const logger = { warn() {} };
          const instances = [0, 1].map(() => createRateLimiter({ store, defaultPolicy, clock, logger }));
          // Keys 0 and 1 share owner 2; each change hands out new objects, as the keyring does.
          const settings: Settings[] = [
            { policies: null, quota: null },
            { policies: { limit: 2, windowSeconds: 4, name: 'p' }, quota: { remaining: 3, refill: null, setAt: new Date(START) } },
            { policies: null, quota: null },
          ];
          let owner = { id: 'o', rateLimits: null as readonly RateLimitPolicy[] | null, quota: null as Quota | null };
          for (const s of steps) {
            if (s.kind === 'wait') {
              time.now += s.ms;
              continue;
            }
            if (s.kind === 'limits' || s.kind === 'quota') {
              const changed: Settings = { ...settings[s.key]! };
              if (s.kind === 'limits') changed.policies = { ...s.policy };
              else changed.quota = { remaining: s.quota.remaining, refill: s.quota.refill, setAt: new Date(clock()) };
              settings[s.key] = changed;
              if (s.key === 2) owner = { id: 'o', rateLimits: changed.policies === null ? null : [changed.policies], quota: changed.quota };
              continue;
            }
            const key = `k${s.key}`;
            const { policies, quota: keyQuota } = settings[s.key]!;
            const options = { quota: keyQuota, owner, cost: s.cost };
            const oracle = createRateLimiter({ store: store.copy(), defaultPolicy, clock, logger, refusalMemory: 0 });
            let expected: KeysetError | undefined;
            try {
              await oracle.check(key, policies, options);
            } catch (error) {
              expected = outcomeOf(error);
            }
            time.latency = s.latency;
            const calls = store.calls;
            let answer: KeysetError | undefined;
            try {
              await instances[s.instance]!.check(key, policies, options);
            } catch (error) {
              answer = outcomeOf(error);
            }
            if (store.calls === calls) {
              remembered += 1;
              expect(answer, 'answered without the store: a refusal').toBeDefined();
              expect(expected, 'the store would refuse it too').toBeDefined();
              if (answer!.code === 'rate_limited') {
                expect(expected!.code).toBe('rate_limited');
                expect(Number(answer!.headers['retry-after'])).toBeLessThanOrEqual(Number(expected!.headers['retry-after']));
              } else {
                // An exhausted quota: certain. Whether the rate limits would also refuse
                // depends on when a call would reach the store (its clock is known to
                // within a round trip), so the store may name either.
                expect(answer!.code).toBe('quota_exhausted');
                expect(['quota_exhausted', 'rate_limited']).toContain(expected!.code);
              }
              if (answer!.code === 'quota_exhausted' && expected!.code === 'quota_exhausted') {
                expect(answer!.extensions.quota).toBe(expected!.extensions.quota);
                expect(answer!.extensions.quota_remaining as number).toBeGreaterThanOrEqual(expected!.extensions.quota_remaining as number);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    // About 150 in 300 runs: the property is not passed vacuously.
    expect(remembered).toBeGreaterThan(50);
  });
});
