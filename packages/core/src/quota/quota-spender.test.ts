/**
 * The quota spender on its own: a request's cost spent from one quota or several at once
 * (all-or-nothing), the decision each gives (remaining, next refill, Retry-After only when
 * a refill would cover the cost), and what happens while the quota store fails: admitted
 * uncounted (`failOpen`) or refused with 503, logged once per outage, never counted locally.
 * On the real memory quota store; a failing store is that store behind a switch.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rejection as refusal } from '@keyset/test-support';
import { ConfigError, isKeysetError, toProblem } from '../errors.ts';
import { createMemoryQuotaStore } from './memory-quota-store.ts';
import { createQuotaSpender, type QuotaSpenderOptions } from './quota-spender.ts';
import type { Quota, QuotaSpend, QuotaStore, QuotaStoreResult } from './types.ts';
import { hourly, oneOff, T0 } from './quotas.test-support.ts';

function setup(overrides: Partial<QuotaSpenderOptions> = {}) {
  let now = T0;
  const warnings: { details: Record<string, unknown>; message: string }[] = [];
  const spender = createQuotaSpender({
    store: createMemoryQuotaStore(),
    clock: () => now,
    timeoutMs: 1000,
    failOpen: false,
    retryAfterSeconds: 3,
    warn: (details, message) => void warnings.push({ details, message }),
    ...overrides,
  });
  return { spender, warnings, advance: (ms: number) => void (now += ms) };
}

/** The memory quota store behind a switch: answering (as a promise), failing, silent, or answering short. */
function switchableStore(): QuotaStore & { mode: 'ok' | 'fail' | 'hang' | 'short' } {
  const memory = createMemoryQuotaStore();
  const answer = <T>(value: () => T): Promise<T> => {
    if (store.mode === 'fail') return Promise.reject(new Error('ECONNREFUSED'));
    if (store.mode === 'hang') return new Promise(() => undefined);
    return Promise.resolve(value());
  };
  const store = {
    mode: 'ok' as 'ok' | 'fail' | 'hang' | 'short',
    spend: (request: QuotaSpend): Promise<QuotaStoreResult> => answer(() => memory.spend(request)),
    spendAll: (requests: readonly QuotaSpend[]): Promise<QuotaStoreResult[]> => answer(() => (store.mode === 'short' ? [] : memory.spendAll(requests))),
  };
  return store;
}

describe('createQuotaSpender', () => {
  it('refuses a store without spend() when created', () => {
    expect(() => setup({ store: {} as QuotaStore })).toThrow(ConfigError);
  });

  it('spends from a one-off budget until the cost no longer fits, then refuses with no Retry-After (waiting will not help)', async () => {
    const { spender } = setup();
    const quota = oneOff(10);
    expect(await spender.spend('key_a', quota, 4)).toEqual({ allowed: true, cost: 4, remaining: 6, nextRefillAt: null, retryAfterSeconds: 0 });
    expect(await spender.spend('key_a', quota, 7)).toEqual({ allowed: false, cost: 0, remaining: 6, nextRefillAt: null, retryAfterSeconds: 0 });
    expect(await spender.spend('key_a', quota, 6)).toMatchObject({ allowed: true, remaining: 0 });
    // Counts are per key.
    expect(await spender.spend('key_b', quota, 10)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('never spends more than the budget, whatever the costs asked (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 50 }), fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 30 }), async (budget, costs) => {
        const { spender } = setup();
        let spent = 0;
        for (const cost of costs) {
          const decision = await spender.spend('key_a', oneOff(budget), cost);
          expect(decision.allowed).toBe(cost <= budget - spent);
          if (decision.allowed) spent += cost;
          expect(decision.cost).toBe(decision.allowed ? cost : 0);
          expect(decision.remaining).toBe(budget - spent);
        }
      }),
    );
  });

  it('gives a refused request the wait until the next refill, only when that refill covers the cost', async () => {
    const { spender, advance } = setup();
    const quota = hourly(5, 5);
    expect(await spender.spend('key_a', quota, 5)).toMatchObject({ allowed: true, remaining: 0, nextRefillAt: new Date(T0 + 3_600_000) });
    advance(3_600_000 - 90_500);
    expect(await spender.spend('key_a', quota, 2)).toEqual({ allowed: false, cost: 0, remaining: 0, nextRefillAt: new Date(T0 + 3_600_000), retryAfterSeconds: 91 });
    expect(await spender.spend('key_a', quota, 6)).toMatchObject({ allowed: false, retryAfterSeconds: 0 });
    advance(90_500);
    expect(await spender.spend('key_a', quota, 2)).toMatchObject({ allowed: true, remaining: 3, nextRefillAt: new Date(T0 + 7_200_000) });
  });

  it('spends several quotas all-or-nothing: when one falls short, none is spent', async () => {
    const { spender } = setup();
    const entries = [
      { key: 'key_a', quota: oneOff(10), partition: 'owner:cus_1' },
      { key: 'owner:cus_1', quota: oneOff(3) },
    ];
    const refused = await spender.spendAll(entries, 5);
    expect(refused.map((d) => [d.allowed, d.cost, d.remaining])).toEqual([
      [true, 0, 10],
      [false, 0, 3],
    ]);
    const spent = await spender.spendAll(entries, 3);
    expect(spent.map((d) => [d.allowed, d.cost, d.remaining])).toEqual([
      [true, 3, 7],
      [true, 3, 0],
    ]);
  });

  it('plans the store requests of a spend (with their partition) and settles the answers as spendAll does', () => {
    const { spender } = setup();
    const entries = [
      { key: 'key_a', quota: hourly(1, 10), partition: 'owner:cus_1' },
      { key: 'owner:cus_1', quota: oneOff(9) },
    ];
    const plan = spender.plan(entries, 2, T0 + 1000);
    expect(plan.requests.map((r) => [r.key, r.partition, r.cost])).toEqual([
      ['key_a', 'owner:cus_1', 2],
      ['owner:cus_1', undefined, 2],
    ]);
    expect(plan.nextRefills).toEqual([T0 + 3_600_000, null]);
    const settled = spender.settle(plan, [
      { allowed: false, remaining: 1 },
      { allowed: true, remaining: 9 },
    ]);
    expect(settled).toEqual([
      { allowed: false, cost: 0, remaining: 1, nextRefillAt: new Date(T0 + 3_600_000), retryAfterSeconds: 3599 },
      { allowed: true, cost: 0, remaining: 9, nextRefillAt: null, retryAfterSeconds: 0 },
    ]);
  });
});

describe('createQuotaSpender: a quota store that fails', () => {
  it('refuses with 503 and Retry-After when closed, logs the outage once, and once when the store answers again', async () => {
    const store = switchableStore();
    const { spender, warnings } = setup({ store, retryAfterSeconds: 4 });
    store.mode = 'fail';
    for (let i = 0; i < 3; i++) {
      const error = await refusal(spender.spend('key_a', oneOff(10), 1));
      const problem = toProblem(error);
      expect([problem.status, problem.body.code, problem.headers['retry-after']]).toEqual([503, 'unavailable', '4']);
    }
    expect(warnings.map((w) => w.message)).toEqual(['quota store failed']);
    expect(warnings[0]?.details).toMatchObject({ mode: 'closed' });
    store.mode = 'ok';
    expect(await spender.spend('key_a', oneOff(10), 1)).toMatchObject({ allowed: true, remaining: 9 });
    expect(warnings.map((w) => w.message)).toEqual(['quota store failed', 'quota store answers again']);
  });

  it('admits uncounted when open: allowed, nothing spent, marked degraded', async () => {
    const store = switchableStore();
    const { spender } = setup({ store, failOpen: true });
    store.mode = 'fail';
    const decisions = await spender.spendAll([{ key: 'key_a', quota: hourly(1, 1) }, { key: 'owner:cus_1', quota: oneOff(1) }], 1);
    expect(decisions).toEqual([
      { allowed: true, cost: 0, remaining: 0, nextRefillAt: new Date(T0 + 3_600_000), retryAfterSeconds: 0, degraded: 'open' },
      { allowed: true, cost: 0, remaining: 0, nextRefillAt: null, retryAfterSeconds: 0, degraded: 'open' },
    ]);
    // Nothing was counted locally meanwhile: the store's count is whole when it is back.
    store.mode = 'ok';
    expect(await spender.spend('key_a', hourly(1, 1), 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('treats a silent store (past timeoutMs) and a short answer as failures', async () => {
    const store = switchableStore();
    const { spender } = setup({ store, timeoutMs: 5 });
    store.mode = 'hang';
    expect(isKeysetError(await refusal(spender.spend('key_a', oneOff(10), 1)))).toBe(true);
    store.mode = 'short';
    const error = await refusal(spender.spendAll([{ key: 'key_a', quota: oneOff(1) }, { key: 'owner:cus_1', quota: oneOff(1) }], 1));
    expect(isKeysetError(error) && error.code).toBe('unavailable');
  });

  it('refuses with 503 a spend from two quotas on a store without spendAll(), never spending them one by one', async () => {
    const memory = createMemoryQuotaStore();
    const { spender, warnings } = setup({ store: { spend: (request) => memory.spend(request) } });
    const entries = [{ key: 'key_a', quota: oneOff(5) }, { key: 'owner:cus_1', quota: oneOff(5) }];
    for (let i = 0; i < 2; i++) {
      const error = await refusal(spender.spendAll(entries, 1));
      expect(toProblem(error).status).toBe(503);
    }
    expect(warnings).toHaveLength(1);
    expect(memory.size).toBe(0);
    // One quota alone still spends.
    expect(await spender.spend('key_a', oneOff(5), 1)).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe("createQuotaSpender: a request's quotas, enforced then observed", () => {
  const observed = (quota: Quota): Quota => ({ ...quota, mode: 'observe' });

  it('spends the observed quotas only after the enforced ones covered the cost, and only when asked to', async () => {
    const { spender } = setup();
    const entries = [
      { key: 'key_a', quota: oneOff(5), partition: 'owner:cus_1' },
      { key: 'owner:cus_1', quota: observed(oneOff(2)) },
    ];
    const first = await spender.spendRequest(entries, 2, { observed: true, headers: {} });
    expect(first.map((d) => d && [d.allowed, d.remaining])).toEqual([
      [true, 3],
      [true, 0],
    ]);
    // The observed quota cannot cover the cost: it says so and spends nothing; the enforced one is spent.
    const second = await spender.spendRequest(entries, 2, { observed: true, headers: {} });
    expect(second.map((d) => d && [d.allowed, d.cost, d.remaining])).toEqual([
      [true, 2, 1],
      [false, 0, 0],
    ]);
    // Not asked (an observed limit before it would already refuse): the observed quota is not decided.
    expect((await spender.spendRequest(entries, 1, { observed: false, headers: {} }))[1]).toBeUndefined();
    // The enforced quota refuses: the observed one is not reached.
    expect(await spender.spendRequest(entries, 2, { observed: true, headers: {} })).toEqual([expect.objectContaining({ allowed: false, remaining: 0 }), undefined]);
  });

  it('refuses with 503 carrying the given headers while the store fails for an enforced quota, and leaves an observed one uncounted', async () => {
    const store = switchableStore();
    const { spender } = setup({ store, retryAfterSeconds: 4 });
    store.mode = 'fail';
    const error = await refusal(spender.spendRequest([{ key: 'key_a', quota: oneOff(5) }], 1, { observed: true, headers: { ratelimit: '"default";r=4;t=1' } }));
    expect(toProblem(error).headers).toMatchObject({ ratelimit: '"default";r=4;t=1', 'retry-after': '4' });
    expect(await spender.spendRequest([{ key: 'key_a', quota: observed(oneOff(5)) }], 1, { observed: true, headers: {} })).toEqual([undefined]);
  });

  it('settles the answers of a store that decided a request in one step as spendRequest decides them', () => {
    const { spender } = setup();
    const entries = [
      { key: 'key_a', quota: oneOff(5), partition: 'owner:cus_1' },
      { key: 'owner:cus_1', quota: observed(oneOff(1)) },
    ];
    const plan = spender.plan(entries, 2, T0);
    const answers = [
      { allowed: true, remaining: 3 },
      { allowed: false, remaining: 1 },
    ];
    // Each group is settled on its own: the enforced quota's cost was spent although the observed one could not cover it.
    expect(spender.settleRequest(plan, answers, true).map((d) => d && [d.allowed, d.cost])).toEqual([
      [true, 2],
      [false, 0],
    ]);
    expect(spender.settleRequest(plan, answers, false)[1]).toBeUndefined();
  });
});
