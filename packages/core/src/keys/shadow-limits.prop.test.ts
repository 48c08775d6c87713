/**
 * Shadow limits, at the core: for any limits of a key and its owner (rate-limit policies,
 * quotas, in-flight caps) and any traffic (requests of any cost, some held in flight and
 * finished later, time passing), the guard with those limits observed never refuses, and
 * the requests it reports `would_refuse` are exactly those the same guard with the same
 * limits enforced refuses, for the same reason, request by request. Two worlds over memory
 * stores and one clock each, fed the same steps.
 * Failures print a seed and path: replay with fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { createConcurrencyLimit } from '../concurrency/concurrency-limit.ts';
import { createMemoryConcurrencyStore } from '../concurrency/memory-concurrency-store.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import type { LimitMode } from '../rate-limit/limit-mode.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from './memory-key-store.ts';
import { createOwnerAdmin } from './owner-admin.ts';

const T0 = Date.UTC(2026, 0, 1);
const quiet = { warn() {}, error() {} };

/** The limits of one key and its owner, each of which the two worlds observe or enforce. */
interface Limits {
  keyPolicies: { limit: number; windowSeconds: number }[];
  keyQuota: { remaining: number; refill: { amount: number; interval: number } | null } | null;
  keyCap: number | null;
  owner: { policies: { limit: number; windowSeconds: number }[]; quota: { remaining: number } | null; cap: number | null } | null;
}

type Step = { advance: number } | { send: number; hold: boolean } | { finish: number };

const policy = fc.record({ limit: fc.integer({ min: 1, max: 4 }), windowSeconds: fc.integer({ min: 1, max: 30 }) });
const limitsArb: fc.Arbitrary<Limits> = fc.record({
  keyPolicies: fc.array(policy, { minLength: 1, maxLength: 2 }),
  keyQuota: fc.option(fc.record({ remaining: fc.nat(6), refill: fc.option(fc.record({ amount: fc.integer({ min: 1, max: 4 }), interval: fc.integer({ min: 5, max: 40 }) }), { nil: null }) }), { nil: null }),
  keyCap: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null }),
  owner: fc.option(
    fc.record({ policies: fc.array(policy, { maxLength: 1 }), quota: fc.option(fc.record({ remaining: fc.nat(8) }), { nil: null }), cap: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }) }),
    { nil: null },
  ),
});
const stepsArb: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ send: fc.integer({ min: 0, max: 2 }), hold: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 15_000 }) }) },
    { weight: 2, arbitrary: fc.record({ finish: fc.nat(5) }) },
  ),
  { minLength: 1, maxLength: 40 },
);

/** One guard whose every limit has `mode`, over memory stores and its own clock. */
async function world(limits: Limits, mode: LimitMode) {
  let now = T0;
  const clock = () => now;
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', clock, lastUsed: false, logger: quiet });
  const named = (list: { limit: number; windowSeconds: number }[]) => list.map((p, i) => ({ ...p, name: `p${i}`, mode }));
  const { owner } = limits;
  if (owner !== null) {
    await createOwnerAdmin(keyring).create({
      id: 'cus_1',
      rateLimits: owner.policies.length === 0 ? null : named(owner.policies),
      quota: owner.quota === null ? null : { ...owner.quota, mode },
    });
  }
  const { key } = await createKeyAdmin(keyring).issue({
    name: 'k',
    scopes: ['orders:read'],
    rateLimits: named(limits.keyPolicies),
    quota: limits.keyQuota === null ? null : { ...limits.keyQuota, mode },
    ...(owner === null ? {} : { ownerId: 'cus_1' }),
  });
  const events: DecisionEvent[] = [];
  const guard = createApiKeyGuard({
    keyring,
    limiter: createRateLimiter({ defaultPolicy: { limit: 1000, windowSeconds: 1 }, clock, logger: quiet, onDecision: (e) => void events.push(e) }),
    concurrency: createConcurrencyLimit({
      ...(limits.keyCap === null ? { max: () => null } : { max: { max: limits.keyCap, mode } }),
      ...(owner?.cap === null || owner === null ? {} : { ownerMax: { max: owner.cap, mode } }),
      store: createMemoryConcurrencyStore({ clock }),
      leaseTtlSeconds: 86_400,
      logger: quiet,
    }),
  });
  return {
    events,
    advance: (ms: number) => void (now += ms),
    /** One request: `allowed`, the refusal's code, with the release of an admitted one. */
    async send(cost: number): Promise<{ code: string; release: () => void }> {
      try {
        const result = await guard.check({ authorization: `ApiKey ${key}`, url: '/orders', remoteAddress: '127.0.0.1' }, { scopes: ['orders:read'], cost });
        return { code: 'allowed', release: result.release ?? (() => {}) };
      } catch (error) {
        if (!isKeysetError(error)) throw error;
        return { code: error.code, release: () => {} };
      }
    },
  };
}

/** What the event of an observing world says of a request: `allowed`, or the refusal an enforced limit would have given. */
const wouldBe = (event: DecisionEvent | undefined): string => (event?.outcome === 'would_refuse' ? String(event.reason) : String(event?.outcome));

describe('shadow limits', () => {
  it('observed, never refuse; their would-be refusals are exactly, and for the same reason, the refusals of the same limits enforced', async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb, stepsArb, async (limits, steps) => {
        const observed = await world(limits, 'observe');
        const enforced = await world(limits, 'enforce');
        // Requests still at work, by send: each world's release.
        const open: { observed: () => void; enforced: () => void }[] = [];
        let sent = 0;
        const refusedReasons: Record<string, number> = {};
        for (const step of steps) {
          if ('advance' in step) {
            observed.advance(step.advance);
            enforced.advance(step.advance);
          } else if ('finish' in step) {
            if (open.length === 0) continue;
            const [done] = open.splice(step.finish % open.length, 1);
            done!.observed();
            done!.enforced();
            // Leases go back off the response path: let the memory stores take them.
            await new Promise((resolve) => setImmediate(resolve));
          } else {
            const a = await observed.send(step.send);
            const b = await enforced.send(step.send);
            sent += 1;
            expect(a.code).toBe('allowed');
            expect(observed.events).toHaveLength(sent);
            expect(enforced.events).toHaveLength(sent);
            expect(wouldBe(observed.events[sent - 1])).toBe(b.code);
            if (b.code !== 'allowed') refusedReasons[b.code] = (refusedReasons[b.code] ?? 0) + 1;
            if (step.hold) open.push({ observed: a.release, enforced: b.release });
            else {
              a.release();
              b.release();
              await new Promise((resolve) => setImmediate(resolve));
            }
          }
        }
        // Counted exactly: the would-be refusals per reason are the enforced refusals per reason.
        const counted: Record<string, number> = {};
        for (const e of observed.events) if (e.outcome === 'would_refuse') counted[String(e.reason)] = (counted[String(e.reason)] ?? 0) + 1;
        expect(counted).toEqual(refusedReasons);
        for (const done of open) (done.observed(), done.enforced());
      }),
      { numRuns: 150 },
    );
  });
});
