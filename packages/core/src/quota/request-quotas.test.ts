/**
 * A request's quotas on their own: which counts a request spends from (its key's, inside
 * the owner's partition when it has an owner; its owner's as `owner:<id>`), spent together,
 * what the spend did, and the 429 when either falls short (naming whose quota, never the
 * owner's id). An invalid quota is a 503, not a free pass. On the real memory quota store.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rejection as refusal } from '@keyset/test-support';
import { isKeysetError, toProblem } from '../errors.ts';
import { limitRequest, spendsQuota, type LimitRequest } from '../rate-limit/limit-request.ts';
import type { RateLimitCheckOptions } from '../rate-limit/types.ts';
import { createMemoryQuotaStore } from './memory-quota-store.ts';
import { ownerQuotaKey } from './quota-period.ts';
import { createQuotaSpender } from './quota-spender.ts';
import { createRequestQuotas, quotaExhaustedError } from './request-quotas.ts';
import type { Quota, QuotaStore } from './types.ts';
import { hourly, oneOff, T0 } from './quotas.test-support.ts';

function setup(store: QuotaStore = createMemoryQuotaStore(), failOpen = false) {
  const warnings: { details: Record<string, unknown>; message: string }[] = [];
  const warn = (details: Record<string, unknown>, message: string): void => void warnings.push({ details, message });
  const spender = createQuotaSpender({ store, clock: () => T0 + 1000, timeoutMs: 1000, failOpen, retryAfterSeconds: 2, warn });
  const named = createRequestQuotas({ warn });
  // As the limiter composes them: request-quotas names the counts, the spender spends them, request-quotas reads the outcome.
  const quotas = {
    ...named,
    spends: spendsQuota,
    spend: async (r: LimitRequest, headers: Record<string, string>, observed: boolean) => named.summary(r, await spender.spendRequest(named.entriesOf(r), r.cost, { observed, headers })),
    read: (key: string, quota: Quota, ownerId: string | undefined) => spender.spend(key, named.usableQuota(key, quota), 0, ownerId === undefined ? undefined : ownerQuotaKey(ownerId)),
  };
  return { quotas, warnings };
}

const request = (key: string, options: RateLimitCheckOptions): LimitRequest => limitRequest(key, null, options);

describe('createRequestQuotas: which quotas a request spends from', () => {
  it("spends from the key's quota, the owner's, both, or none", () => {
    const { quotas } = setup();
    const noQuota = { id: 'cus_1', rateLimits: null, quota: null };
    const withQuota = { id: 'cus_1', rateLimits: null, quota: oneOff(100) };
    expect(quotas.spends(request('key_a', {}))).toBe(false);
    expect(quotas.spends(request('key_a', { owner: noQuota }))).toBe(false);
    expect(quotas.spends(request('key_a', { quota: oneOff(5) }))).toBe(true);
    expect(quotas.spends(request('key_a', { owner: withQuota }))).toBe(true);

    expect(quotas.entriesOf(request('key_a', {}))).toEqual([]);
    expect(quotas.entriesOf(request('key_a', { quota: oneOff(5) }))).toEqual([{ key: 'key_a', quota: oneOff(5) }]);
    // The key's count sits in its owner's partition, owner quota or not.
    expect(quotas.entriesOf(request('key_a', { quota: oneOff(5), owner: noQuota }))).toEqual([{ key: 'key_a', quota: oneOff(5), partition: 'owner:cus_1' }]);
    expect(quotas.entriesOf(request('key_a', { quota: oneOff(5), owner: withQuota }))).toEqual([
      { key: 'key_a', quota: oneOff(5), partition: 'owner:cus_1' },
      { key: 'owner:cus_1', quota: oneOff(100) },
    ]);
    expect(quotas.entriesOf(request('key_a', { owner: withQuota }))).toEqual([{ key: 'owner:cus_1', quota: oneOff(100) }]);
  });

  it('refuses a request whose quota is invalid with 503, logged once per quota, never waved through', () => {
    const { quotas, warnings } = setup();
    const broken: Quota = { remaining: -1, refill: null, setAt: new Date(T0) };
    const undated = { remaining: 5, refill: null, setAt: new Date(Number.NaN) };
    for (const quota of [broken, broken, undated]) {
      let thrown: unknown;
      try {
        quotas.entriesOf(request('key_a', { quota }));
      } catch (error) {
        thrown = error;
      }
      expect(isKeysetError(thrown) && thrown.code).toBe('unavailable');
    }
    expect(warnings.map((w) => w.details['key'])).toEqual(['key_a', 'key_a']);
    expect(warnings[1]?.details['problem']).toBe('setAt must be a valid Date');
  });
});

describe('createRequestQuotas: spending', () => {
  it("shares an owner's quota between its keys, and leaves a key's own count whole when the owner's refuses", async () => {
    const { quotas } = setup();
    const owner = { id: 'cus_1', rateLimits: null, quota: oneOff(5) };
    const first = await quotas.spend(request('key_a', { quota: oneOff(10), owner, cost: 3 }), {}, true);
    expect(first).toMatchObject({ allowed: true, cost: 3, key: { remaining: 7 }, owner: { remaining: 2 }, refusing: [] });
    const second = await quotas.spend(request('key_b', { quota: oneOff(10), owner, cost: 3 }), {}, true);
    expect(second).toMatchObject({ allowed: false, cost: 0, key: { allowed: true, remaining: 10 }, owner: { allowed: false, remaining: 2 } });
    expect(second.refusing).toEqual([second.owner]);
    // key_b's own credits were not spent by the refused request.
    expect(await quotas.read('key_b', oneOff(10), 'cus_1')).toMatchObject({ allowed: true, remaining: 10 });
  });

  it("reads a key's quota without spending it", async () => {
    const { quotas } = setup();
    await quotas.spend(request('key_a', { quota: oneOff(10), cost: 4 }), {}, true);
    for (let i = 0; i < 2; i++) expect(await quotas.read('key_a', oneOff(10), undefined)).toMatchObject({ allowed: true, cost: 0, remaining: 6 });
  });

  it('spends exactly the costs that fit, over any sequence of keys of one owner (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 30 }), fc.array(fc.record({ key: fc.constantFrom('key_a', 'key_b'), cost: fc.integer({ min: 0, max: 8 }) }), { maxLength: 20 }), async (shared, steps) => {
        const { quotas } = setup();
        const owner = { id: 'cus_1', rateLimits: null, quota: oneOff(shared) };
        let left = shared;
        for (const { key, cost } of steps) {
          const spent = await quotas.spend(request(key, { owner, cost }), {}, true);
          expect(spent.allowed).toBe(cost <= left);
          if (spent.allowed) left -= cost;
          expect(spent.cost).toBe(spent.allowed ? cost : 0);
          expect(spent.owner?.remaining).toBe(left);
        }
      }),
    );
  });

  it("rejects with 503 while the store fails closed, carrying the rate limit's headers and the store's Retry-After", async () => {
    const { quotas } = setup({ spend: () => Promise.reject(new Error('ECONNREFUSED')) });
    const error = await refusal(quotas.spend(request('key_a', { quota: oneOff(10) }), { ratelimit: '"default";r=4;t=1' }, true));
    const problem = toProblem(error);
    expect(problem.status).toBe(503);
    expect(problem.headers).toMatchObject({ ratelimit: '"default";r=4;t=1', 'retry-after': '2' });
  });

  it('counts no cost for a request admitted while the store failed open', async () => {
    const { quotas } = setup({ spend: () => Promise.reject(new Error('ECONNREFUSED')) }, true);
    const spent = await quotas.spend(request('key_a', { quota: oneOff(10), cost: 5 }), {}, true);
    expect([spent.allowed, spent.cost, spent.key?.degraded]).toEqual([true, 0, 'open']);
  });
});

describe('quotaExhaustedError', () => {
  it("names the key's quota when it ran out, with a Retry-After when its refill covers the cost", async () => {
    const { quotas } = setup();
    const r = request('key_a', { quota: hourly(2), cost: 3 });
    const spent = await quotas.spend(r, { ratelimit: '"default";r=9;t=1' }, true);
    const problem = toProblem(quotaExhaustedError(r, spent, { ratelimit: '"default";r=9;t=1' }));
    expect(problem.status).toBe(429);
    expect(problem.body).toMatchObject({ code: 'quota_exhausted', quota: 'key', quota_remaining: 2, cost: 3 });
    // The refill (2 credits) does not cover a cost of 3: no wait helps.
    expect(problem.headers['retry-after']).toBeUndefined();
    expect(problem.headers['ratelimit']).toBe('"default";r=9;t=1');

    const small = request('key_b', { quota: hourly(2), cost: 2 });
    await quotas.spend(small, {}, true);
    const again = await quotas.spend(small, {}, true);
    const waited = toProblem(quotaExhaustedError(small, again, {}));
    expect(waited.headers['retry-after']).toBe(String(3600 - 1));
    expect(waited.body).toMatchObject({ retry_after: 3599 });
  });

  it("names the owner's quota without the owner's id", async () => {
    const { quotas } = setup();
    const r = request('key_a', { quota: oneOff(10), owner: { id: 'cus_secret_42', rateLimits: null, quota: oneOff(1) }, cost: 2 });
    const spent = await quotas.spend(r, {}, true);
    const problem = toProblem(quotaExhaustedError(r, spent, {}));
    expect(problem.body).toMatchObject({ quota: 'owner', quota_remaining: 1, cost: 2 });
    expect(JSON.stringify(problem)).not.toContain('cus_secret_42');
  });
});
