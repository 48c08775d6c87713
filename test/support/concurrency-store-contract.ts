/**
 * The property every in-flight lease store holds (memory, Redis): any interleaving of
 * acquire, release and crash (a client that forgets its leases without giving them back)
 * from two clients of one store never has more than `max` live leases, and a lease past
 * its expiry never counts. The store's clock is read just before and just after each
 * acquire (`now`): a lease whose expiry lies after both was surely live when the store
 * decided, one whose expiry lies before both surely was not, and only a lease expiring in
 * between may count either way. With a fake clock the two readings are one, and the model
 * is exact.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ConcurrencyStore } from '@keyset/core';

export type LeaseCommand =
  | { kind: 'acquire'; client: 0 | 1; holder: 0 | 1 }
  | { kind: 'release'; client: 0 | 1; pick: number }
  | { kind: 'crash'; client: 0 | 1 }
  | { kind: 'wait'; fraction: number };

export const leaseCommand: fc.Arbitrary<LeaseCommand> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('acquire' as const), client: fc.constantFrom(0 as const, 1 as const), holder: fc.constantFrom(0 as const, 1 as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), client: fc.constantFrom(0 as const, 1 as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), client: fc.constantFrom(0 as const, 1 as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), fraction: fc.integer({ min: 0, max: 12 }).map((tenths) => tenths / 10) }) },
);

interface ModelLease {
  holder: string;
  id: string;
  client: 0 | 1;
  /** Its expiry lies in [earliest, latest] (the store's clock around the acquire, plus the TTL). */
  earliest: number;
  latest: number;
  released: boolean;
}

/**
 * Runs one command list against two clients of one store. `wait(ms)` lets the store's
 * clock move on by at least `ms` (a fake clock is moved; a real one is waited for);
 * `now()` reads the store's clock in ms (the fake one, or Redis `TIME`).
 */
export async function runLeaseCommands(
  clients: readonly [ConcurrencyStore, ConcurrencyStore],
  commands: readonly LeaseCommand[],
  options: { max: number; ttlMs: number; wait: (ms: number) => Promise<void>; now: () => number | Promise<number>; namespace: string },
): Promise<void> {
  const { max, ttlMs, wait, now, namespace } = options;
  const leases: ModelLease[] = [];
  const held: [ModelLease[], ModelLease[]] = [[], []];
  let next = 0;
  for (const command of commands) {
    if (command.kind === 'acquire') {
      const holder = `${namespace}:${command.holder}`;
      const id = `lease-${(next += 1)}`;
      const before = await now();
      const decision = await clients[command.client].acquire(holder, id, max, ttlMs);
      const after = await now();
      const mine = leases.filter((l) => l.holder === holder && !l.released);
      const surelyLive = mine.filter((l) => l.earliest > after).length;
      const maybeLive = mine.filter((l) => l.latest > before).length;
      // Never more than max live leases, and an expired lease never counts.
      if (surelyLive >= max) expect(decision.acquired).toBe(false);
      if (maybeLive < max) expect(decision.acquired).toBe(true);
      if (decision.acquired) {
        const lease = { holder, id, client: command.client, earliest: before + ttlMs, latest: after + ttlMs, released: false };
        leases.push(lease);
        held[command.client].push(lease);
      }
    } else if (command.kind === 'release') {
      const mine = held[command.client];
      if (mine.length === 0) continue;
      const [lease] = mine.splice(command.pick % mine.length, 1) as [ModelLease];
      await clients[command.client].release(lease.holder, lease.id);
      lease.released = true;
    } else if (command.kind === 'crash') {
      // The instance died: its leases are never given back, they only expire.
      held[command.client] = [];
    } else {
      await wait(Math.round(command.fraction * ttlMs));
    }
  }
}
