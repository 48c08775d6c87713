import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import type { DecisionEvent, DecisionOutcome } from '../rate-limit/decision-event.ts';
import { createMemoryUsageStore } from './memory-usage-store.ts';
import type { UsageDelta, UsageFlushToken, UsageStore } from './types.ts';
import { createUsageCounter } from './usage-counter.ts';
import { USAGE_OUTCOMES } from './usage-range.ts';

const MINUTE = 60_000;
const event = (keyId: string, outcome: DecisionOutcome = 'allowed', cost = 0): DecisionEvent => ({ keyId, ownerId: 'owner_1', outcome, policy: 'default', cost, remaining: 0 });

/** A store that records every batch and fails while `failing` is set. */
function recordingStore(): UsageStore & { batches: UsageDelta[][]; tokens: (UsageFlushToken | undefined)[]; failing: boolean } {
  const inner = createMemoryUsageStore();
  const store = {
    batches: [] as UsageDelta[][],
    tokens: [] as (UsageFlushToken | undefined)[],
    failing: false,
    async add(deltas: readonly UsageDelta[], token?: UsageFlushToken) {
      store.tokens.push(token);
      if (store.failing) throw new Error('database down');
      store.batches.push(deltas.map((d) => ({ ...d, requests: [...d.requests] })));
      await inner.add(deltas, token);
    },
    read: inner.read,
    top: inner.top,
    prune: inner.prune,
  };
  return store;
}

const total = (store: { batches: UsageDelta[][] }): number => store.batches.flat().reduce((n, d) => n + d.requests.reduce((a, b) => a + b, 0), 0);

afterEach(() => {
  vi.useRealTimers();
});

describe('createUsageCounter', () => {
  it('adds events up per key and minute and writes them in one add per flush', async () => {
    let now = 10 * MINUTE + 5;
    const store = recordingStore();
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false });
    counter.record(event('a', 'allowed', 2));
    counter.record(event('a', 'rate_limited'));
    counter.record(event('b', 'insufficient_scope'));
    now += MINUTE;
    counter.record(event('a', 'allowed', 1));
    expect(counter.pending).toBe(3);
    await counter.flush();
    expect(store.batches).toHaveLength(1);
    expect(store.batches[0]).toEqual([
      { keyId: 'a', ownerId: 'owner_1', minute: 10 * MINUTE, requests: [1, 1, 0, 0, 0, 0, 0, 0, 0], credits: 2 },
      { keyId: 'b', ownerId: 'owner_1', minute: 10 * MINUTE, requests: [0, 0, 0, 1, 0, 0, 0, 0, 0], credits: 0 },
      { keyId: 'a', ownerId: 'owner_1', minute: 11 * MINUTE, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 1 },
    ]);
    expect(counter.pending).toBe(0);
    // Nothing new: no write at all.
    await counter.flush();
    expect(store.batches).toHaveLength(1);
    await counter.close();
  });

  it('counts a would-be refusal of an observed limit by its reason, apart from allowed and from the refusals', async () => {
    const now = 10 * MINUTE;
    const store = recordingStore();
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false });
    counter.record({ ...event('a', 'would_refuse', 1), reason: 'rate_limited' });
    counter.record({ ...event('a', 'would_refuse', 1), reason: 'quota_exhausted' });
    counter.record({ ...event('a', 'would_refuse'), reason: 'concurrency_limited' });
    counter.record({ ...event('a', 'would_refuse'), reason: 'concurrency_limited' });
    counter.record(event('a', 'allowed', 1));
    await counter.flush();
    expect(store.batches[0]).toEqual([{ keyId: 'a', ownerId: 'owner_1', minute: 10 * MINUTE, requests: [1, 0, 0, 0, 0, 0, 1, 1, 2], credits: 3 }]);
    expect(USAGE_OUTCOMES.slice(6)).toEqual(['would_refuse_rate_limited', 'would_refuse_quota_exhausted', 'would_refuse_concurrency_limited']);
    await counter.close();
  });

  it('a crash loses at most what was recorded since the last flush began (one interval)', async () => {
    vi.useFakeTimers({ now: 0 });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 50, max: 1000 }), async (gaps, interval) => {
        vi.setSystemTime(0);
        const store = recordingStore();
        const counter = createUsageCounter({ store, clock: () => Date.now(), flushIntervalMs: interval, pruneIntervalMs: false });
        const recordedAt: number[] = [];
        for (const gap of gaps) {
          await vi.advanceTimersByTimeAsync(gap);
          counter.record(event(`k${recordedAt.length % 3}`));
          recordedAt.push(Date.now());
        }
        // The crash: the process is gone, no close(). What the store holds is all it keeps.
        const crashAt = Date.now();
        const written = total(store);
        const lost = recordedAt.length - written;
        expect(lost).toBeGreaterThanOrEqual(0);
        // Every event older than one interval before the crash was written.
        expect(lost).toBeLessThanOrEqual(recordedAt.filter((t) => t > crashAt - interval).length);
        await counter.close();
        expect(total(store)).toBe(recordedAt.length);
      }),
      { numRuns: 30 },
    );
  });

  it('keeps the deltas of a failed flush, retries them as they were with the same token, then what came since, and warns once per outage', async () => {
    let now = 0;
    const store = recordingStore();
    const warnings: [Record<string, unknown>, string][] = [];
    vi.useFakeTimers({ now: 0 });
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 100, pruneIntervalMs: false, logger: { warn: (d, m) => warnings.push([d, m]) } });
    store.failing = true;
    counter.record(event('key_one', 'allowed', 3));
    await vi.advanceTimersByTimeAsync(100);
    counter.record(event('key_one', 'quota_exhausted'));
    // Tries at 100, 300, 700, 1500 ms: each failure doubles the wait.
    await vi.advanceTimersByTimeAsync(1400);
    expect(store.tokens).toHaveLength(4);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]![1]).toMatch(/usage flush failed; the counts are kept/);
    expect(warnings[0]![0]).toMatchObject({ error: 'Error: database down', pendingKeys: 1 });
    store.failing = false;
    now += 1;
    await vi.advanceTimersByTimeAsync(1600);
    expect(store.batches).toEqual([
      [{ keyId: 'key_one', ownerId: 'owner_1', minute: 0, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 3 }],
      [{ keyId: 'key_one', ownerId: 'owner_1', minute: 0, requests: [0, 0, 1, 0, 0, 0, 0, 0, 0], credits: 0 }],
    ]);
    // Every retry of the first batch carried its token; the second batch the next sequence.
    const [first, ...rest] = store.tokens;
    expect(first).toEqual({ instance: expect.any(String), sequence: 1 });
    expect(rest.slice(0, -1).every((token) => token?.sequence === 1 && token.instance === first?.instance)).toBe(true);
    expect(rest.at(-1)).toEqual({ instance: first?.instance, sequence: 2 });
    expect(warnings).toHaveLength(2);
    expect(warnings[1]![1]).toBe('usage flush succeeded again');
    // No line names a key.
    expect(JSON.stringify(warnings)).not.toContain('key_one');
    await counter.close();
  });

  it('a batch the store committed but reported failed (a lost reply) is retried with its token and counted once', async () => {
    let now = 0;
    const inner = createMemoryUsageStore();
    let lostReplies = 2;
    const store: UsageStore = {
      ...inner,
      async add(deltas, token) {
        await inner.add(deltas, token);
        if (lostReplies-- > 0) throw new Error('Connection terminated unexpectedly');
      },
    };
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, logger: { warn: () => undefined } });
    counter.record(event('a', 'allowed', 2));
    await expect(counter.flush()).rejects.toThrow('Connection terminated');
    counter.record(event('a', 'rate_limited'));
    await expect(counter.flush()).rejects.toThrow('Connection terminated');
    now += MINUTE;
    counter.record(event('b'));
    await counter.close();
    const [a] = await inner.read({ keyId: 'a', from: 0, to: MINUTE, interval: 'minute' });
    expect(a?.requests).toMatchObject({ allowed: 1, rate_limited: 1 });
    expect(a?.credits).toBe(2);
    const [b] = await inner.read({ keyId: 'b', from: MINUTE, to: 2 * MINUTE, interval: 'minute' });
    expect(b?.requests.allowed).toBe(1);
  });

  it('writes a large batch in chunks of 10,000 key-minutes, each with its own sequence; a failed chunk is retried from where it stopped', async () => {
    const now = 0;
    const store = recordingStore();
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, logger: { warn: () => undefined } });
    for (let i = 0; i < 25_000; i++) counter.record(event(`k${i}`));
    const add = store.add;
    let calls = 0;
    let failedToken: UsageFlushToken | undefined;
    store.add = async (deltas, token) => {
      if (++calls === 2) {
        failedToken = token;
        throw new Error('database down');
      }
      return add(deltas, token);
    };
    await expect(counter.flush()).rejects.toThrow('database down');
    expect(counter.pending).toBe(15_000);
    await counter.flush();
    expect(store.batches.map((b) => b.length)).toEqual([10_000, 10_000, 5_000]);
    expect(failedToken?.sequence).toBe(2);
    expect(store.tokens.map((t) => t?.sequence)).toEqual([1, 2, 3]);
    expect(total(store)).toBe(25_000);
    expect(new Set(store.batches.flat().map((d) => d.keyId)).size).toBe(25_000);
    await counter.close();
  });

  it('holds at most maxPendingKeys key-minutes, a batch in doubt included: past it, new ones are refused and counted in one warning', async () => {
    let now = 0;
    const store = recordingStore();
    const warnings: [Record<string, unknown>, string][] = [];
    const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, maxPendingKeys: 3, logger: { warn: (d, m) => warnings.push([d, m]) } });
    store.failing = true;
    counter.record(event('a'));
    counter.record(event('a'));
    now += MINUTE;
    counter.record(event('b'));
    await expect(counter.flush()).rejects.toThrow('database down');
    now += MINUTE;
    counter.record(event('c'));
    counter.record(event('d')); // a 4th key-minute: refused at once, counted as dropped
    expect(counter.pending).toBe(3);
    await expect(counter.flush()).rejects.toThrow('database down');
    expect(counter.pending).toBe(3);
    store.failing = false;
    await counter.flush();
    expect(total(store)).toBe(4);
    expect(warnings.at(-1)).toEqual([{ droppedRequests: 1 }, 'usage counts were dropped: more key-minutes were pending than maxPendingKeys holds (a long store outage, or more active keys than that)']);
    await counter.close();
  });

  it('never holds more than maxPendingKeys key-minutes, whatever the events, minutes and failures; everything held is written once the store answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 40 }), minutes: fc.integer({ min: 0, max: 2 }), flush: fc.boolean(), fails: fc.boolean() }), { minLength: 1, maxLength: 200 }),
        async (cap, steps) => {
          let now = 0;
          const store = recordingStore();
          const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, maxPendingKeys: cap, logger: { warn: () => undefined } });
          let refused = 0;
          let recorded = 0;
          for (const step of steps) {
            now += step.minutes * MINUTE;
            const before = counter.pending;
            counter.record(event(`k${step.key}`));
            recorded++;
            if (counter.pending === before && before >= cap) refused++;
            expect(counter.pending).toBeLessThanOrEqual(cap);
            if (step.flush) {
              store.failing = step.fails;
              await counter.flush().catch(() => undefined);
              expect(counter.pending).toBeLessThanOrEqual(cap);
            }
          }
          store.failing = false;
          await counter.close();
          expect(counter.pending).toBe(0);
          // What was not refused at the cap was written, exactly once.
          expect(total(store)).toBeGreaterThanOrEqual(recorded - refused);
          expect(total(store)).toBeLessThanOrEqual(recorded);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('close() flushes what is left, ignores events after it, and resolves even when the store fails', async () => {
    const store = recordingStore();
    const warnings: string[] = [];
    const counter = createUsageCounter({ store, flushIntervalMs: 3_600_000, logger: { warn: (_d, m) => warnings.push(m) } });
    counter.record(event('a'));
    await counter.close();
    counter.record(event('a'));
    expect(total(store)).toBe(1);
    expect(counter.pending).toBe(0);
    const failing = recordingStore();
    failing.failing = true;
    const other = createUsageCounter({ store: failing, flushIntervalMs: 3_600_000, logger: { warn: (_d, m) => warnings.push(m) } });
    other.record(event('a'));
    await expect(other.close()).resolves.toBeUndefined();
    expect(warnings).toContain('usage flush failed; the counts are kept and retried at the next flush');
  });

  it('prunes after a flush once pruneIntervalMs has passed, and a failing prune is only logged', async () => {
    let now = 0;
    const store = recordingStore();
    const pruned: number[] = [];
    const warnings: string[] = [];
    let pruneFails = false;
    const counter = createUsageCounter({
      store: { ...store, add: store.add, prune: async (at: number) => (pruned.push(at), pruneFails ? Promise.reject(new Error('no')) : 0) },
      clock: () => now,
      flushIntervalMs: 3_600_000,
      pruneIntervalMs: 10_000,
      logger: { warn: (_d, m) => warnings.push(m) },
    });
    await counter.flush();
    expect(pruned).toEqual([]);
    now = 10_000;
    await counter.flush();
    expect(pruned).toEqual([10_000]);
    now = 20_000;
    pruneFails = true;
    await counter.flush();
    expect(warnings).toEqual(['usage prune failed; retried at the next prune interval']);
    await counter.close();
  });

  it('fed by the limiter\'s onDecision: the event names the key\'s owner, so an owner\'s totals need no lookup', async () => {
    const store = createMemoryUsageStore();
    const now = 5 * MINUTE;
    const usage = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false });
    const limiter = createRateLimiter({ defaultPolicy: { limit: 2, windowSeconds: 60 }, clock: () => now, onDecision: usage.record });
    const owner = { id: 'cus_1', rateLimits: null };
    for (let i = 0; i < 3; i++) await limiter.check('key_a', undefined, { owner }).catch(() => undefined);
    await limiter.check('key_b', undefined, { owner, refusal: 'insufficient_scope' });
    await limiter.check('key_c');
    await usage.close();
    const [ownerBucket] = await store.read({ ownerId: 'cus_1', from: now, to: now + MINUTE, interval: 'minute' });
    expect(ownerBucket?.requests).toMatchObject({ allowed: 2, rate_limited: 1, quota_exhausted: 0, insufficient_scope: 1, concurrency_limited: 0, unavailable: 0, would_refuse_rate_limited: 0 });
    const [keyC] = await store.read({ keyId: 'key_c', from: now, to: now + MINUTE, interval: 'minute' });
    expect(keyC?.requests.allowed).toBe(1);
  });

  it('refuses bad options with ConfigError and ignores an unknown outcome', async () => {
    const store = createMemoryUsageStore();
    expect(() => createUsageCounter({ store: {} as never })).toThrow(ConfigError);
    expect(() => createUsageCounter({ store, flushIntervalMs: 5 })).toThrow(ConfigError);
    expect(() => createUsageCounter({ store, pruneIntervalMs: 10 })).toThrow(ConfigError);
    expect(() => createUsageCounter({ store, maxPendingKeys: 0 })).toThrow(ConfigError);
    const counter = createUsageCounter({ store, flushIntervalMs: 3_600_000 });
    counter.record({ ...event('a'), outcome: 'weird' as DecisionOutcome });
    expect(counter.pending).toBe(0);
    await counter.close();
    expect(USAGE_OUTCOMES).toHaveLength(9);
  });
});
