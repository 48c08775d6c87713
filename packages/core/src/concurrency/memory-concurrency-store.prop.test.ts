/**
 * The lease store contract (test/support/concurrency-store-contract.ts) on the memory
 * store: two clients share one store (two guards of one process), time is a clock the
 * test moves, so expiry is checked to the millisecond.
 */
import fc from 'fast-check';
import { leaseCommand, runLeaseCommands } from '@keyset/test-support';
import { describe, expect, it } from 'vitest';
import { createMemoryConcurrencyStore } from './memory-concurrency-store.ts';

describe('memory concurrency store', () => {
  it('never holds more than max live leases nor counts one past its expiry, whatever the interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(leaseCommand, { maxLength: 80 }), fc.integer({ min: 1, max: 4 }), async (commands, max) => {
        let now = 1_000_000;
        const store = createMemoryConcurrencyStore({ clock: () => now });
        await runLeaseCommands([store, store], commands, {
          max,
          ttlMs: 1000,
          namespace: 'k',
          now: () => now,
          wait: async (ms) => {
            now += ms;
          },
        });
      }),
      { numRuns: 300 },
    );
  });

  it('admits exactly max of a burst, then one more per release; a lease expires at now + ttl, not before', () => {
    let now = 0;
    const store = createMemoryConcurrencyStore({ clock: () => now });
    const answers = Array.from({ length: 8 }, (_, i) => store.acquire('key:a', `l${i}`, 3, 1000));
    expect(answers.map((a) => (a as { acquired: boolean }).acquired)).toEqual([true, true, true, false, false, false, false, false]);
    store.release('key:a', 'l1');
    store.release('key:a', 'l1'); // twice: still one slot
    expect(store.acquire('key:a', 'm1', 3, 1000)).toEqual({ acquired: true });
    expect(store.acquire('key:a', 'm2', 3, 1000)).toEqual({ acquired: false });
    // Another holder is not affected.
    expect(store.acquire('key:b', 'b1', 3, 1000)).toEqual({ acquired: true });
    now = 999;
    expect(store.acquire('key:a', 'm3', 3, 1000)).toEqual({ acquired: false });
    now = 1000; // l0 and l2 end; m1 (taken at 0) too: all three slots are free again
    expect([1, 2, 3, 4].map((i) => (store.acquire('key:a', `n${i}`, 3, 1000) as { acquired: boolean }).acquired)).toEqual([true, true, true, false]);
  });

  it('refuses an unknown option', () => {
    expect(() => createMemoryConcurrencyStore({ clok: () => 0 } as never)).toThrow(/clock/);
  });
});
