/**
 * The behaviour every `UsageStore` must have (memory, PostgreSQL on a real server, PGlite),
 * run by each store's tests against the real thing: hour and day buckets equal the sum of
 * their minutes, several counters flushing into one store add up exactly, reads are dense,
 * and pruning keeps exactly what the retention says.
 */
import { USAGE_OUTCOMES } from '@keyset/core/adapter';
import { ConfigError, createUsageCounter, type DecisionOutcome, type UsageBucket, type UsageRequests, type WouldRefuseReason, type UsageDelta, type UsageInterval, type UsageStore } from '@keyset/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

export interface UsageStoreHarness {
  store: UsageStore;
  /** An id no other test (or test run) uses. */
  freshId(): string;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A day no other run writes to, so `top` over a shared table sees only this run's keys. */
function freshDay(): number {
  return (20_000 + Math.floor(Math.random() * 40_000)) * DAY;
}

const totalOf = (buckets: readonly UsageBucket[]): { requests: UsageRequests; credits: number } => {
  const requests = Object.fromEntries(USAGE_OUTCOMES.map((o) => [o, 0])) as UsageRequests;
  let credits = 0;
  for (const bucket of buckets) {
    for (const outcome of USAGE_OUTCOMES) requests[outcome] += bucket.requests[outcome];
    credits += bucket.credits;
  }
  return { requests, credits };
};

/** Buckets of `interval` summed per start of a coarser `into` bucket. */
function rolledUp(buckets: readonly UsageBucket[], into: number): Map<number, ReturnType<typeof totalOf>> {
  const groups = new Map<number, UsageBucket[]>();
  for (const bucket of buckets) {
    const start = Math.floor(bucket.start / into) * into;
    groups.set(start, [...(groups.get(start) ?? []), bucket]);
  }
  return new Map([...groups].map(([start, group]) => [start, totalOf(group)]));
}

async function readAll(store: UsageStore, subject: { keyId: string } | { ownerId: string }, from: number, days: number, interval: UsageInterval): Promise<UsageBucket[]> {
  const out: UsageBucket[] = [];
  // One day per read: a minute read covers at most 1440 buckets.
  for (let d = 0; d < days; d++) out.push(...(await store.read({ ...subject, from: from + d * DAY, to: from + (d + 1) * DAY, interval })));
  return out;
}

const countsArb = fc.array(fc.nat({ max: 5 }), { minLength: USAGE_OUTCOMES.length, maxLength: USAGE_OUTCOMES.length });

export function describeUsageStore(label: string, harness: () => UsageStoreHarness, options: { runs?: number } = {}): void {
  const { runs = 20 } = options;
  describe(`UsageStore contract: ${label}`, () => {
    it('adds every delta to its minute, hour and day: hours and days equal the sum of their minutes, an owner the sum of its keys', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ key: fc.nat({ max: 2 }), minute: fc.nat({ max: 2 * 1440 - 1 }), requests: countsArb, credits: fc.nat({ max: 9 }) }), { minLength: 1, maxLength: 30 }),
          fc.integer({ min: 1, max: 3 }),
          async (entries, batches) => {
            const { store, freshId } = harness();
            const day = freshDay();
            const owner = freshId();
            const keys = [freshId(), freshId(), freshId()];
            const deltas: UsageDelta[] = entries.map((e) => ({ keyId: keys[e.key]!, ownerId: owner, minute: day + e.minute * MINUTE, requests: e.requests, credits: e.credits }));
            // Concurrent batches may hold the same rows: the store adds, never overwrites.
            await Promise.all(Array.from({ length: batches }, (_, b) => store.add(deltas.filter((_, i) => i % batches === b))));
            const ownerMinutes = await readAll(store, { ownerId: owner }, day, 2, 'minute');
            for (const [k, keyId] of keys.entries()) {
              const minutes = await readAll(store, { keyId }, day, 2, 'minute');
              expect(minutes).toHaveLength(2 * 1440);
              const mine = entries.filter((e) => e.key === k);
              expect(totalOf(minutes)).toEqual(totalOf(mine.map((e) => ({ start: 0, requests: Object.fromEntries(USAGE_OUTCOMES.map((o, i) => [o, e.requests[i]])) as UsageRequests, credits: e.credits }))));
              const hours = await store.read({ keyId, from: day, to: day + 2 * DAY, interval: 'hour' });
              expect(hours).toHaveLength(48);
              const byHour = rolledUp(minutes, HOUR);
              for (const hour of hours) expect({ requests: hour.requests, credits: hour.credits }).toEqual(byHour.get(hour.start));
              const days = await store.read({ keyId, from: day, to: day + 2 * DAY, interval: 'day' });
              const byDay = rolledUp(minutes, DAY);
              expect(days.map((d) => ({ requests: d.requests, credits: d.credits }))).toEqual([byDay.get(day), byDay.get(day + DAY)]);
            }
            const keyMinutes = await Promise.all(keys.map((keyId) => readAll(store, { keyId }, day, 2, 'minute')));
            ownerMinutes.forEach((bucket, i) => expect({ requests: bucket.requests, credits: bucket.credits }).toEqual(totalOf(keyMinutes.map((m) => m[i]!))));
          },
        ),
        { numRuns: runs },
      );
    });

    it('several counters flushing into one store add up exactly, whatever the interleaving', async () => {
      const opArb = fc.oneof(
        fc.record({ type: fc.constant('record' as const), counter: fc.nat({ max: 2 }), key: fc.nat({ max: 3 }), outcome: fc.constantFrom(...USAGE_OUTCOMES), cost: fc.nat({ max: 3 }) }),
        fc.record({ type: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 150_000 }) }),
        fc.record({ type: fc.constant('flush' as const), counter: fc.nat({ max: 2 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
          const { store, freshId } = harness();
          const day = freshDay();
          let now = day + 1000;
          const counters = [0, 1, 2].map(() => createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false }));
          const owner = freshId();
          const keys = [freshId(), freshId(), freshId(), freshId()];
          const expected = new Map(keys.map((k) => [k, { requests: Object.fromEntries(USAGE_OUTCOMES.map((o) => [o, 0])) as UsageRequests, credits: 0 }]));
          const flushes: Promise<void>[] = [];
          for (const op of ops) {
            if (op.type === 'advance') now += op.ms;
            else if (op.type === 'flush') flushes.push(counters[op.counter]!.flush());
            else {
              const keyId = keys[op.key]!;
              // A would-be refusal comes as `would_refuse` with its reason, and counts under that reason.
              const would = op.outcome.startsWith('would_refuse_') ? (op.outcome.slice('would_refuse_'.length) as WouldRefuseReason) : undefined;
              counters[op.counter]!.record({ keyId, ownerId: owner, outcome: would === undefined ? (op.outcome as DecisionOutcome) : 'would_refuse', ...(would === undefined ? {} : { reason: would }), policy: 'default', cost: op.cost, remaining: 0 });
              expected.get(keyId)!.requests[op.outcome]++;
              expected.get(keyId)!.credits += op.cost;
            }
          }
          await Promise.all([...flushes, ...counters.map((c) => c.close())]);
          const days = Math.ceil((now - day) / DAY) + 1;
          for (const keyId of keys) expect(totalOf(await readAll(store, { keyId }, day, days, 'minute'))).toEqual(expected.get(keyId));
          const ownerTotal = totalOf(await store.read({ ownerId: owner, from: day, to: day + days * DAY, interval: 'day' }));
          expect(ownerTotal).toEqual(totalOf([...expected.values()].map((e) => ({ start: 0, ...e }))));
        }),
        { numRuns: runs },
      );
    });

    it('reads are dense and oldest first: every bucket from the one holding `from` to the last before `to`, zeros included', async () => {
      const { store, freshId } = harness();
      const day = freshDay();
      const keyId = freshId();
      await store.add([{ keyId, ownerId: null, minute: day + 5 * MINUTE, requests: [1, 2, 3, 4, 5, 6, 7, 8, 9], credits: 7 }]);
      const buckets = await store.read({ keyId, from: day + 30_000, to: day + 10 * MINUTE + 1, interval: 'minute' });
      expect(buckets.map((b) => b.start)).toEqual(Array.from({ length: 11 }, (_, i) => day + i * MINUTE));
      expect(buckets[5]).toEqual({ start: day + 5 * MINUTE, requests: {
          allowed: 1,
          rate_limited: 2,
          quota_exhausted: 3,
          insufficient_scope: 4,
          concurrency_limited: 5,
          unavailable: 6,
          would_refuse_rate_limited: 7,
          would_refuse_quota_exhausted: 8,
          would_refuse_concurrency_limited: 9,
        },
        credits: 7,
      });
      expect(buckets.filter((b) => b.credits === 0)).toHaveLength(10);
      expect(await store.read({ keyId: freshId(), from: day, to: day + 3 * HOUR, interval: 'hour' })).toHaveLength(3);
      // A key without an owner counts for no owner.
      expect(totalOf(await store.read({ ownerId: freshId(), from: day, to: day + DAY, interval: 'day' })).credits).toBe(0);
    });

    it('top ranks keys by requests or refusals in the range, most first, ties by key id, at most `limit`', async () => {
      const { store, freshId } = harness();
      const day = freshDay();
      const [a, b, c] = [freshId(), freshId(), freshId()].sort();
      await store.add([
        { keyId: a!, ownerId: null, minute: day, requests: [2, 0, 0, 0, 0, 0, 1, 1, 1], credits: 5 },
        { keyId: b!, ownerId: null, minute: day + HOUR, requests: [1, 2, 1, 0, 0, 0, 0, 0, 0], credits: 1 },
        { keyId: c!, ownerId: null, minute: day + HOUR, requests: [3, 1, 0, 0, 0, 0, 0, 0, 0], credits: 0 },
        // Outside the range read below.
        { keyId: c!, ownerId: null, minute: day + 5 * HOUR, requests: [50, 50, 0, 0, 0, 0, 0, 0, 0], credits: 0 },
      ]);
      const range = { from: day, to: day + 2 * HOUR };
      expect(await store.top({ ...range, by: 'requests', limit: 10 })).toEqual([
        // A would-be refusal of an observed limit was served: a request, not a refusal.
        { keyId: a, requests: 5, refusals: 0, credits: 5 },
        { keyId: b, requests: 4, refusals: 3, credits: 1 },
        { keyId: c, requests: 4, refusals: 1, credits: 0 },
      ]);
      expect(await store.top({ ...range, by: 'refusals', limit: 1 })).toEqual([{ keyId: b, requests: 4, refusals: 3, credits: 1 }]);
      expect(await store.top({ ...range, interval: 'minute', by: 'refusals', limit: 5 })).toHaveLength(2);
    });

    it('top sums a range from its coarsest rows: a day ranked at minute interval reads day and hour rows, still there once its minutes are pruned', async () => {
      const { store, freshId } = harness();
      const day = freshDay();
      const keyId = freshId();
      await store.add([
        { keyId, ownerId: null, minute: day + 5 * MINUTE, requests: [3, 1, 0, 0, 0, 0, 0, 0, 0], credits: 3 },
        { keyId, ownerId: null, minute: day + 13 * HOUR + 7 * MINUTE, requests: [2, 0, 0, 0, 0, 1, 0, 0, 0], credits: 2 },
        { keyId, ownerId: null, minute: day + DAY + 30 * MINUTE, requests: [4, 0, 0, 0, 0, 0, 0, 0, 0], credits: 4 },
      ]);
      // Minutes are kept two days by default: three days on, this day's minute rows are gone.
      await store.prune(day + 3 * DAY);
      expect((await store.read({ keyId, from: day, to: day + HOUR, interval: 'minute' }))[5]!.requests.allowed).toBe(0);
      expect(await store.top({ from: day, to: day + DAY, interval: 'minute', by: 'requests', limit: 100 })).toContainEqual({ keyId, requests: 7, refusals: 2, credits: 5 });
      // Across a day boundary, from 12:00 to 12:00: hours, then the next day's hours.
      expect(await store.top({ from: day + 12 * HOUR, to: day + DAY + 12 * HOUR, interval: 'minute', by: 'requests', limit: 100 })).toContainEqual({ keyId, requests: 7, refusals: 1, credits: 6 });
    });

    it('prune deletes the buckets past their retention and keeps the rest', async () => {
      const { store, freshId } = harness();
      const now = freshDay() + 12 * HOUR;
      const keyId = freshId();
      const old = now - 3 * DAY;
      await store.add([
        { keyId, ownerId: null, minute: old, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 },
        { keyId, ownerId: null, minute: now - HOUR, requests: [2, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 },
      ]);
      expect(await store.prune(now)).toBeGreaterThanOrEqual(1);
      const minutesThen = await store.read({ keyId, from: old, to: old + MINUTE, interval: 'minute' });
      expect(minutesThen[0]!.requests.allowed).toBe(0);
      expect((await store.read({ keyId, from: now - HOUR, to: now - HOUR + MINUTE, interval: 'minute' }))[0]!.requests.allowed).toBe(2);
      // Hours are kept 90 days by default: the old hour is still there.
      expect((await store.read({ keyId, from: old, to: old + HOUR, interval: 'hour' }))[0]!.requests.allowed).toBe(1);
      await store.prune(now + 100 * DAY);
      expect((await store.read({ keyId, from: old, to: old + HOUR, interval: 'hour' }))[0]!.requests.allowed).toBe(0);
      expect((await store.read({ keyId, from: old, to: old + DAY, interval: 'day' }))[0]!.requests.allowed).toBe(1);
    });

    it('a batch with a flush token adds once: a retry (same sequence) or an older sequence of the instance adds nothing, another instance adds', async () => {
      const { store, freshId } = harness();
      const day = freshDay();
      const keyId = freshId();
      const instance = freshId();
      const delta: UsageDelta = { keyId, ownerId: null, minute: day, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 2 };
      const allowed = async (): Promise<number> => totalOf(await store.read({ keyId, from: day, to: day + MINUTE, interval: 'minute' })).requests.allowed;
      await store.add([delta], { instance, sequence: 2 });
      await store.add([delta], { instance, sequence: 2 });
      await store.add([delta], { instance, sequence: 1 });
      expect(await allowed()).toBe(1);
      await store.add([delta], { instance, sequence: 3 });
      await store.add([delta], { instance: freshId(), sequence: 1 });
      // Without a token, a plain add.
      await store.add([delta]);
      expect(await allowed()).toBe(4);
      // Retries racing each other (several connections at once): still once.
      await Promise.all(Array.from({ length: 6 }, () => store.add([delta], { instance, sequence: 4 })));
      expect(await allowed()).toBe(5);
      expect((await store.read({ keyId, from: day, to: day + DAY, interval: 'day' }))[0]!.credits).toBe(10);
      for (const bad of [{ instance: '', sequence: 1 }, { instance, sequence: 0 }, { instance, sequence: 1.5 }, { instance: 'x'.repeat(101), sequence: 1 }]) {
        await expect(store.add([delta], bad)).rejects.toThrow(ConfigError);
      }
    });

    it('refuses malformed deltas and queries with ConfigError, writing nothing', async () => {
      const { store, freshId } = harness();
      const keyId = freshId();
      const good: UsageDelta = { keyId, ownerId: null, minute: freshDay(), requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 };
      for (const bad of [{ minute: good.minute + 1 }, { requests: [1] }, { requests: [-1, 0, 0, 0, 0, 0] }, { keyId: '' }, { credits: 0.5 }]) {
        await expect(store.add([good, { ...good, ...bad } as UsageDelta])).rejects.toThrow(ConfigError);
      }
      expect(totalOf(await store.read({ keyId, from: good.minute, to: good.minute + MINUTE, interval: 'minute' })).requests.allowed).toBe(0);
      await expect(store.read({ keyId, from: 0, to: 1441 * MINUTE, interval: 'minute' })).rejects.toThrow(ConfigError);
      await expect(store.read({ keyId, from: 10, to: 5, interval: 'hour' })).rejects.toThrow(ConfigError);
      await expect(store.read({ keyId, from: 0, to: 5, interval: 'week' as never })).rejects.toThrow(ConfigError);
      await expect(store.top({ from: 0, to: HOUR, by: 'requests', limit: 101 })).rejects.toThrow(ConfigError);
    });
  });
}
