/**
 * The behaviour every `QuotaStore` must have (memory, Redis, PostgreSQL), run by each
 * store's tests against the real thing. The concurrency property is the one users rely
 * on: requests racing on any number of connections never spend more than there is, and
 * a refusal only ever happens when the cost truly did not fit.
 */
import type { QuotaStore } from '@keyset/core';
import type { QuotaSpend } from '@keyset/core/adapter';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** `stores`: one or more stores over the same state (e.g. two Redis connections). */
export interface QuotaStoreHarness {
  stores: readonly QuotaStore[];
  /** A key no other test (or test run) uses. */
  freshKey(): string;
}

const spendOf = (key: string, over: Partial<QuotaSpend> = {}): QuotaSpend => ({
  key,
  generation: 1_000,
  initial: 10,
  period: 0,
  refillAmount: null,
  cost: 1,
  ...over,
});

export function describeQuotaStore(label: string, harness: () => QuotaStoreHarness, options: { runs?: number } = {}): void {
  const { runs = 12 } = options;
  describe(`QuotaStore contract: ${label}`, () => {
    it('starts from the initial credits, spends exactly, and refuses a cost that does not fit without spending', async () => {
      const { stores, freshKey } = harness();
      const store = stores[0]!;
      const key = freshKey();
      expect(await store.spend(spendOf(key, { initial: 5, cost: 3 }))).toEqual({ allowed: true, remaining: 2 });
      expect(await store.spend(spendOf(key, { initial: 5, cost: 3 }))).toEqual({ allowed: false, remaining: 2 });
      expect(await store.spend(spendOf(key, { initial: 5, cost: 2 }))).toEqual({ allowed: true, remaining: 0 });
      expect(await store.spend(spendOf(key, { initial: 5, cost: 1 }))).toEqual({ allowed: false, remaining: 0 });
      // Cost 0 reads: always allowed, spends nothing.
      expect(await store.spend(spendOf(key, { initial: 5, cost: 0 }))).toEqual({ allowed: true, remaining: 0 });
    });

    it('a newer generation (an administrator set the credits) restarts the count; an older one never does', async () => {
      const { stores, freshKey } = harness();
      const store = stores[0]!;
      const key = freshKey();
      await store.spend(spendOf(key, { generation: 2_000, initial: 3, cost: 3 }));
      // A stale cached key still carries generation 1000 and 50 credits: no reset.
      expect(await store.spend(spendOf(key, { generation: 1_000, initial: 50 }))).toEqual({ allowed: false, remaining: 0 });
      expect(await store.spend(spendOf(key, { generation: 3_000, initial: 7 }))).toEqual({ allowed: true, remaining: 6 });
    });

    it('refills to the amount (no carry-over) on the first spend of a later period, once', async () => {
      const { stores, freshKey } = harness();
      const store = stores[0]!;
      const key = freshKey();
      const base = { initial: 4, refillAmount: 10 };
      expect(await store.spend(spendOf(key, { ...base, period: 5, cost: 1 }))).toEqual({ allowed: true, remaining: 3 });
      expect(await store.spend(spendOf(key, { ...base, period: 6, cost: 2 }))).toEqual({ allowed: true, remaining: 8 });
      expect(await store.spend(spendOf(key, { ...base, period: 6, cost: 2 }))).toEqual({ allowed: true, remaining: 6 });
      // A request computed on a clock still in the previous period never refills.
      expect(await store.spend(spendOf(key, { ...base, period: 5, cost: 1 }))).toEqual({ allowed: true, remaining: 5 });
      expect(await store.spend(spendOf(key, { ...base, period: 9, cost: 10 }))).toEqual({ allowed: true, remaining: 0 });
    });

    it('holds counts past 2^32 exactly', async () => {
      const { stores, freshKey } = harness();
      const key = freshKey();
      const initial = 900_000_000_000_000;
      expect(await stores[0]!.spend(spendOf(key, { initial, cost: 7 }))).toEqual({ allowed: true, remaining: initial - 7 });
    });

    it('concurrent spends (on every connection at once) never spend more than there is, and refuse only what did not fit', async () => {
      const { stores, freshKey } = harness();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 40 }),
          fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 30 }),
          async (credits, costs) => {
            const key = freshKey();
            const results = await Promise.all(
              costs.map((cost, i) => stores[i % stores.length]!.spend(spendOf(key, { initial: credits, cost }))),
            );
            const admitted = costs.reduce((sum, cost, i) => sum + (results[i]!.allowed ? cost : 0), 0);
            expect(admitted).toBeLessThanOrEqual(credits);
            const left = (await stores[0]!.spend(spendOf(key, { initial: credits, cost: 0 }))).remaining;
            // Exact accounting: what is left is what was not spent…
            expect(left).toBe(credits - admitted);
            // …and every refusal was a cost that did not fit even in what is left at the end
            // (credits only go down, so it did not fit when it was decided either).
            costs.forEach((cost, i) => {
              if (!results[i]!.allowed) expect(cost).toBeGreaterThan(left);
            });
          },
        ),
        { numRuns: runs },
      );
    });
  
    describe("spendAll: a key's quota and its owner's, all-or-nothing", () => {
      it('spends every cost only when each count covers its own; otherwise none (each result says which covered)', async () => {
        const { stores, freshKey } = harness();
        const store = stores[0]!;
        if (store.spendAll === undefined) throw new Error('this store has no spendAll');
        const owner = `owner:${freshKey()}`;
        const key = freshKey();
        const both = (keyCost: number, ownerCost: number) =>
          store.spendAll!([spendOf(key, { initial: 5, cost: keyCost, partition: owner }), spendOf(owner, { initial: 2, cost: ownerCost })]);
        expect(await both(3, 3)).toEqual([
          { allowed: true, remaining: 5 },
          { allowed: false, remaining: 2 },
        ]);
        expect(await both(2, 2)).toEqual([
          { allowed: true, remaining: 3 },
          { allowed: true, remaining: 0 },
        ]);
        expect(await both(4, 0)).toEqual([
          { allowed: false, remaining: 3 },
          { allowed: true, remaining: 0 },
        ]);
        // A refill or a newer generation applies to each count before the comparison.
        expect(await store.spendAll([spendOf(key, { initial: 5, cost: 1, partition: owner }), spendOf(owner, { generation: 2_000, initial: 9, cost: 4 })])).toEqual([
          { allowed: true, remaining: 2 },
          { allowed: true, remaining: 5 },
        ]);
        // The single-quota spend sees the same counts.
        expect(await store.spend(spendOf(owner, { generation: 2_000, initial: 9, cost: 0 }))).toEqual({ allowed: true, remaining: 5 });
      });

      it('concurrent spends of several keys of one owner (on every connection) never spend more than the owner or a key has, and a refusal spends nothing', async () => {
        const { stores, freshKey } = harness();
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 20 }),
            fc.array(fc.option(fc.integer({ min: 0, max: 10 }), { nil: null }), { minLength: 1, maxLength: 3 }),
            fc.array(fc.record({ key: fc.nat(), cost: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 24 }),
            async (ownerCredits, keyCredits, requests) => {
              const owner = `owner:${freshKey()}`;
              const keys = keyCredits.map((credits) => ({ key: freshKey(), credits }));
              const ownerSpend = (cost: number) => spendOf(owner, { initial: ownerCredits, cost });
              const keySpend = (i: number, cost: number) => spendOf(keys[i]!.key, { initial: keys[i]!.credits ?? 0, cost, partition: owner });
              const results = await Promise.all(
                requests.map(({ key: n, cost }, r) => {
                  const i = n % keys.length;
                  const store = stores[r % stores.length]!;
                  const spends = keys[i]!.credits === null ? [ownerSpend(cost)] : [keySpend(i, cost), ownerSpend(cost)];
                  return spends.length === 1 ? Promise.resolve(store.spend(spends[0]!)).then((one) => [one]) : Promise.resolve(store.spendAll!(spends));
                }),
              );
              const admitted = results.map((answers) => answers.every((a) => a.allowed));
              const ownerSpent = requests.reduce((sum, { cost }, r) => sum + (admitted[r] ? cost : 0), 0);
              expect(ownerSpent).toBeLessThanOrEqual(ownerCredits);
              const ownerLeft = (await stores[0]!.spend(ownerSpend(0))).remaining;
              expect(ownerLeft).toBe(ownerCredits - ownerSpent);
              for (const [i, { credits }] of keys.entries()) {
                if (credits === null) continue;
                const spent = requests.reduce((sum, { key: n, cost }, r) => sum + (admitted[r] && n % keys.length === i ? cost : 0), 0);
                expect(spent).toBeLessThanOrEqual(credits);
                expect((await stores[0]!.spend(keySpend(i, 0))).remaining).toBe(credits - spent);
              }
            },
          ),
          { numRuns: runs },
        );
      });
    });
  });
}
