/**
 * Shadow limits over HTTP, for every adapter: one key whose rate limit, quota and in-flight
 * cap are observed, and the same key with the same limits enforced, each behind the
 * adapter's own middleware on a socket, sent the same requests (one held in flight while
 * another arrives, time moved by the test). Observed, every request is served, with no
 * rate-limit header of the observed policy; the requests counted `would_refuse`, by reason,
 * are exactly those the enforced limits refuse, request by request, and the usage counts
 * agree. Serves the lease-renewal app (`LeaseApp`), so an adapter needs nothing new. Test
 * support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import {
  createApiKeyGuard,
  createConcurrencyLimit,
  createKeyAdmin,
  createKeyring,
  createMemoryConcurrencyStore,
  createMemoryKeyStore,
  createMemoryUsageStore,
  createRateLimiter,
  createUsageCounter,
  type ConcurrencyStore,
  type DecisionEvent,
  type LimitMode,
} from '@keyset/core';
import { PREFIX, REALM } from './fixture.ts';
import type { LeaseRenewalUnderTest } from './lease-renewal.ts';

const T0 = Date.UTC(2026, 0, 5, 12);

/** A memory lease store that tells when a lease went back (the adapter gives it back once the response ended). */
function watchReleases(store: ConcurrencyStore): { store: ConcurrencyStore; released(): Promise<void> } {
  let waiting: (() => void)[] = [];
  return {
    store: {
      acquire: (holder, leaseId, max, ttlMs) => store.acquire(holder, leaseId, max, ttlMs),
      release: async (holder, leaseId) => {
        await store.release(holder, leaseId);
        for (const wake of waiting.splice(0)) wake();
      },
    },
    released: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

/** One world: the adapter's app over a guard whose key has every limit in `mode`. */
async function world(adapter: LeaseRenewalUnderTest, mode: LimitMode) {
  let now = T0;
  const clock = () => now;
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, clock, lastUsed: false });
  const { key } = await createKeyAdmin(keyring).issue({
    name: `shadow-${mode}`,
    scopes: [],
    // 3 per minute (one every 20 s, a burst of 3), 4 credits, 1 request at a time.
    rateLimits: [{ name: 'trial', limit: 3, windowSeconds: 60, mode }],
    quota: { remaining: 4, mode },
  });
  const events: DecisionEvent[] = [];
  const usageStore = createMemoryUsageStore();
  const usage = createUsageCounter({ store: usageStore, clock, flushIntervalMs: 3_600_000, pruneIntervalMs: false });
  const leases = watchReleases(createMemoryConcurrencyStore({ clock }));
  const guard = createApiKeyGuard({
    keyring,
    realm: REALM,
    limiter: createRateLimiter({ defaultPolicy: { limit: 1000, windowSeconds: 1 }, clock, onDecision: (event) => (events.push(event), usage.record(event)) }),
    concurrency: createConcurrencyLimit({ max: { max: 1, mode }, store: leases.store }),
  });
  // One stream per admitted `GET /held`, ended by the test.
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  const served = await adapter.serve({
    guard,
    held: () => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(new TextEncoder().encode('held\n')), void streams.push(c)) }),
  });
  const init = { headers: { authorization: `ApiKey ${key}` } };
  return {
    events,
    advance: (ms: number) => void (now += ms),
    get: (path: string) => served.request(path, init),
    /** Ends the held stream; resolves once the client read its end and the lease went back. */
    async finish(response: Response): Promise<void> {
      const back = leases.released();
      streams.shift()?.close();
      await response.text();
      await back;
    },
    /** Usage counted so far, all outcomes. */
    async usage() {
      await usage.flush();
      const [bucket] = await usageStore.read({ keyId: events[0]!.keyId, from: T0, to: T0 + 86_400_000, interval: 'day' });
      return bucket!.requests;
    },
    async close() {
      for (const c of streams.splice(0)) c.close();
      await usage.close();
      await served.close();
      await keyring.close();
    },
  };
}

/** What a response says, compared across the worlds: `200`, or the problem's code. */
async function answer(response: Response): Promise<string> {
  if (response.status === 200) return '200';
  const body = (await response.json()) as { code?: string };
  return `${response.status} ${String(body.code)}`;
}

/** Registers the suite under `describe(name)`. */
export function describeShadowLimits(name: string, adapter: LeaseRenewalUnderTest): void {
  describe(`shadow limits over HTTP: ${name}`, () => {
    it('observed limits never refuse; their would-be refusals, by reason, are exactly the refusals of the same limits enforced', async () => {
      const observed = await world(adapter, 'observe');
      const enforced = await world(adapter, 'enforce');
      try {
        const both = [observed, enforced] as const;
        const answers: [string[], string[]] = [[], []];
        const send = async (path = '/whoami'): Promise<[Response, Response]> => {
          const responses = (await Promise.all(both.map((w) => w.get(path)))) as [Response, Response];
          for (const [i, r] of responses.entries()) answers[i as 0 | 1].push(path === '/held' ? String(r.status) : await answer(r));
          return responses;
        };
        await send();
        // One request held in flight: the next is over the in-flight cap of 1.
        const held = await send('/held');
        await send();
        await Promise.all(both.map((w, i) => w.finish(held[i]!)));
        // The 4th request within the minute: over the rate limit (burst 3).
        await send();
        // Every 20 s a request fits the rate limit again; the quota runs out at the 5th credit.
        for (let i = 0; i < 3; i++) {
          for (const w of both) w.advance(20_000);
          await send();
        }
        expect(answers[1]).toEqual(['200', '200', '429 concurrency_limited', '429 rate_limited', '200', '200', '429 quota_exhausted']);
        expect(answers[0]).toEqual(['200', '200', '200', '200', '200', '200', '200']);
        const wouldBe = observed.events.map((e) => (e.outcome === 'would_refuse' ? `429 ${String(e.reason)}` : '200'));
        expect(wouldBe).toEqual(answers[1]);
        // Counted exactly: the usage of the observed key is the enforced key's, refusals as would-be refusals.
        const [a, b] = [await observed.usage(), await enforced.usage()];
        expect(a).toMatchObject({ allowed: b.allowed, would_refuse_rate_limited: b.rate_limited, would_refuse_quota_exhausted: b.quota_exhausted, would_refuse_concurrency_limited: b.concurrency_limited });
        expect(a).toMatchObject({ rate_limited: 0, quota_exhausted: 0, concurrency_limited: 0 });
        expect(b).toMatchObject({ allowed: 4, rate_limited: 1, quota_exhausted: 1, concurrency_limited: 1 });
      } finally {
        await observed.close();
        await enforced.close();
      }
    });

    it('an observed policy is not in the response headers: a key whose only limit is observed gets none, and never a Retry-After', async () => {
      const observed = await world(adapter, 'observe');
      try {
        for (let i = 0; i < 5; i++) {
          const res = await observed.get('/whoami');
          await res.text();
          expect(res.status).toBe(200);
          expect(res.headers.get('ratelimit')).toBeNull();
          expect(res.headers.get('ratelimit-policy')).toBeNull();
          expect(res.headers.get('retry-after')).toBeNull();
        }
        expect(observed.events.filter((e) => e.outcome === 'would_refuse').map((e) => e.policy)).toEqual(['trial', 'trial']);
      } finally {
        await observed.close();
      }
    });
  });
}
