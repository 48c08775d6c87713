/**
 * The shadow-limits property, over any stores: two guards with the same limits of a key
 * and its owner (rate-limit policies, quotas, in-flight caps), one with every limit
 * observed, the other with every limit enforced, fed the same traffic (requests of any
 * cost, some held in flight and finished later, time passing). The observing one never
 * refuses, and reports `would_refuse` for exactly the requests the enforcing one refuses,
 * for the same reason, request by request. Used by `shadow-limits.prop.test.ts` (memory
 * stores) and `@keyset/redis` (the request store and the separate stores). Test support only.
 * @module
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { createConcurrencyLimit } from '../concurrency/concurrency-limit.ts';
import { createMemoryConcurrencyStore } from '../concurrency/memory-concurrency-store.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import type { LimitMode } from '../rate-limit/limit-mode.ts';
import { createRateLimiter, type RateLimiterOptions } from '../rate-limit/rate-limiter.ts';
import type { ConcurrencyStore } from '../concurrency/types.ts';
import { createApiKeyGuard } from './api-key-guard.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createOwnerAdmin } from '../admin/owner-admin.ts';

const T0 = Date.UTC(2026, 0, 1);
const quiet = { warn() {}, error() {} };

/** The limits of one key and its owner, each of which the two worlds observe or enforce. */
export interface Limits {
  keyPolicies: { limit: number; windowSeconds: number }[];
  keyQuota: { remaining: number; refill: { amount: number; interval: number } | null } | null;
  keyCap: number | null;
  owner: { policies: { limit: number; windowSeconds: number }[]; quota: { remaining: number } | null; cap: number | null } | null;
}

export type Step = { advance: number } | { send: number; hold: boolean } | { finish: number };

/** Stores for one world; `clock` is the world's (a shared store may keep its own, as Redis does). */
export type ShadowStores = (clock: () => number) => {
  limiter?: Pick<RateLimiterOptions, 'store' | 'quotaStore' | 'refusalMemory'>;
  leases?: ConcurrencyStore;
  /** Resolves once every lease given back so far is gone from the store. @default the next turn of the event loop */
  settled?: () => Promise<void>;
};

/**
 * Limits for the property. `minWindowSeconds`: a store with a clock of its own (Redis) sees
 * real time pass between the two worlds' requests; windows of minutes make that moment
 * count for nothing.
 */
export function limitsArb(minWindowSeconds = 1): fc.Arbitrary<Limits> {
  const policy = fc.record({ limit: fc.integer({ min: 1, max: 4 }), windowSeconds: fc.integer({ min: minWindowSeconds, max: minWindowSeconds + 29 }) });
  return fc.record({
  keyPolicies: fc.array(policy, { minLength: 1, maxLength: 2 }),
  keyQuota: fc.option(fc.record({ remaining: fc.nat(6), refill: fc.option(fc.record({ amount: fc.integer({ min: 1, max: 4 }), interval: fc.integer({ min: 5, max: 40 }) }), { nil: null }) }), { nil: null }),
  keyCap: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null }),
  owner: fc.option(
    fc.record({ policies: fc.array(policy, { maxLength: 1 }), quota: fc.option(fc.record({ remaining: fc.nat(8) }), { nil: null }), cap: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }) }),
    { nil: null },
  ),
  });
}

/** Traffic: requests (some held in flight), finishes, and time passing (`advance: false`: none, for a store with a clock of its own). */
export function stepsArb(advance = true): fc.Arbitrary<Step[]> {
  return fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ send: fc.integer({ min: 0, max: 2 }), hold: fc.boolean() }) },
    { weight: advance ? 2 : 0, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 15_000 }) }) },
    { weight: 2, arbitrary: fc.record({ finish: fc.nat(5) }) },
  ),
  { minLength: 1, maxLength: 40 },
  );
}

/** One guard whose every limit has `mode`, over memory stores and its own clock. */
async function world(limits: Limits, mode: LimitMode, stores: ShadowStores) {
  let now = T0;
  const clock = () => now;
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', clock, lastUsed: false, logger: quiet });
  const named = (list: { limit: number; windowSeconds: number }[]) => list.map((p, i) => ({ ...p, name: `p${i}`, mode }));
  const { owner } = limits;
  // Each world its own owner id: the worlds may share a store (Redis), never a count.
  const ownerId = `cus_${mode}_${Math.random().toString(36).slice(2, 10)}`;
  if (owner !== null) {
    await createOwnerAdmin(keyring).create({
      id: ownerId,
      rateLimits: owner.policies.length === 0 ? null : named(owner.policies),
      quota: owner.quota === null ? null : { ...owner.quota, mode },
    });
  }
  const { key } = await createKeyAdmin(keyring).issue({
    name: 'k',
    scopes: ['orders:read'],
    rateLimits: named(limits.keyPolicies),
    quota: limits.keyQuota === null ? null : { ...limits.keyQuota, mode },
    ...(owner === null ? {} : { ownerId }),
  });
  const events: DecisionEvent[] = [];
  const shared = stores(clock);
  const guard = createApiKeyGuard({
    keyring,
    limiter: createRateLimiter({ ...shared.limiter, defaultPolicy: { limit: 1000, windowSeconds: 1 }, clock, logger: quiet, onDecision: (e) => void events.push(e) }),
    concurrency: createConcurrencyLimit({
      ...(limits.keyCap === null ? { max: () => null } : { max: { max: limits.keyCap, mode } }),
      ...(owner?.cap === null || owner === null ? {} : { ownerMax: { max: owner.cap, mode } }),
      store: shared.leases ?? createMemoryConcurrencyStore({ clock }),
      leaseTtlSeconds: 86_400,
      logger: quiet,
    }),
  });
  return {
    events,
    settled: shared.settled ?? (() => new Promise<void>((resolve) => setImmediate(resolve))),
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

/** Runs `steps` through both worlds over `stores` and checks the property (see the module comment). */
export async function checkShadowEquivalence(limits: Limits, steps: readonly Step[], stores: ShadowStores): Promise<void> {
  const observed = await world(limits, 'observe', stores);
  const enforced = await world(limits, 'enforce', stores);
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
}
