/**
 * `onFlush`: after each write, how far behind the store was (from the oldest count in the
 * write being made to the write ending), whether it succeeded, and how many requests'
 * counts were dropped since the previous event.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import { createMemoryUsageStore } from './memory-usage-store.ts';
import type { UsageDelta, UsageFlushToken, UsageStore } from './types.ts';
import { createUsageCounter, type UsageFlushEvent } from './usage-counter.ts';

const event = (keyId: string): DecisionEvent => ({ keyId, outcome: 'allowed', policy: 'default', cost: 0, remaining: 0 });

function setup(maxPendingKeys = 100) {
  let now = 1_000_000;
  let failing = false;
  const inner = createMemoryUsageStore();
  const store: UsageStore = {
    async add(deltas: readonly UsageDelta[], token: UsageFlushToken) {
      if (failing) throw new Error('database down');
      await inner.add(deltas, token);
    },
    read: inner.read,
    top: inner.top,
    prune: inner.prune,
  };
  const events: UsageFlushEvent[] = [];
  const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, maxPendingKeys, logger: { warn() {} }, onFlush: (e) => void events.push(e) });
  return { counter, events, advance: (ms: number) => (now += ms), setFailing: (v: boolean) => (failing = v) };
}

describe('createUsageCounter({ onFlush })', () => {
  it('the lag runs from the oldest count in the write, not the newest', async () => {
    const { counter, events, advance } = setup();
    counter.record(event('a'));
    advance(700);
    counter.record(event('b'));
    advance(300);
    await counter.flush();
    expect(events).toEqual([{ ok: true, keys: 2, lagMs: 1000, droppedRequests: 0 }]);
    await counter.flush(); // nothing to write: no event
    expect(events).toHaveLength(1);
    await counter.close();
  });

  it('a failed write is reported and its counts keep their age until their retry succeeds; newer counts are a write of their own', async () => {
    const { counter, events, advance, setFailing } = setup();
    counter.record(event('a'));
    advance(500);
    setFailing(true);
    await expect(counter.flush()).rejects.toThrow('database down');
    advance(2000);
    counter.record(event('b'));
    setFailing(false);
    advance(100);
    await counter.flush();
    // The failed batch is retried as it was (the same token), then what came since.
    expect(events).toEqual([
      { ok: false, keys: 1, lagMs: 500, droppedRequests: 0 },
      { ok: true, keys: 1, lagMs: 2600, droppedRequests: 0 },
      { ok: true, keys: 1, lagMs: 100, droppedRequests: 0 },
    ]);
    await counter.close();
  });

  it('counts dropped requests once each, at the next event', async () => {
    const { counter, events } = setup(2);
    for (const key of ['a', 'b', 'c', 'd', 'c']) counter.record(event(key));
    await counter.flush();
    expect(events).toEqual([{ ok: true, keys: 2, lagMs: 0, droppedRequests: 3 }]);
    counter.record(event('e'));
    await counter.flush();
    expect(events[1]).toEqual({ ok: true, keys: 1, lagMs: 0, droppedRequests: 0 });
    await counter.close();
  });

  it('a hook that throws does not fail the flush', async () => {
    const store = createMemoryUsageStore();
    const counter = createUsageCounter({ store, flushIntervalMs: 3_600_000, pruneIntervalMs: false, onFlush: () => { throw new Error('metrics down'); } });
    counter.record(event('a'));
    await expect(counter.flush()).resolves.toBeUndefined();
    await counter.close();
  });

  it('refuses a hook that is not a function', () => {
    expect(() => createUsageCounter({ store: createMemoryUsageStore(), onFlush: 1 as never })).toThrow(ConfigError);
  });
});
