/**
 * The counter's key-minutes not yet written, held compactly: one slot per key and minute,
 * the slot's seven numbers (six outcome counts and the credits) side by side in one
 * `Float64Array`, its key id, owner and minute in three arrays, and per minute one `Map`
 * from key id to slot (the only lookup a request makes). No object per key-minute: memory
 * is a fixed few bytes a slot, grown by doubling up to the counter's bound, and handed back
 * whole once the slots are written (a sealed batch drops its Maps at once).
 * @module
 */
import type { UsageDelta } from './types.ts';
import { USAGE_OUTCOMES } from './usage-range.ts';

/** Numbers per slot: each outcome's count, then the credits. */
export const PENDING_WIDTH: number = USAGE_OUTCOMES.length + 1;
const CREDITS = USAGE_OUTCOMES.length;
const FIRST_CAPACITY = 256;

/** Key-minutes being counted (or, once sealed, waiting to be written). */
export interface PendingUsage {
  /** Slots held. */
  readonly size: number;
  /** Every slot's numbers, `PENDING_WIDTH` per slot. Replaced when it grows: read it after `slot()`. */
  readonly counts: Float64Array;
  /** The key id → slot map of one minute, created on first use. */
  minute(start: number): Map<string, number>;
  /** A new slot (counts zero) for `keyId` in `cells`, the map `minute(start)` gave. */
  slot(cells: Map<string, number>, start: number, keyId: string, ownerId: string | null): number;
  /** Drops the per-minute maps: no slot is added any more, only read. */
  seal(): void;
  /** The deltas of slots `from` to `to` (exclusive), in slot order. */
  deltas(from: number, to: number): UsageDelta[];
}

/** Creates an empty holder that grows to at most `capacity` slots. */
export function createPendingUsage(capacity: number): PendingUsage {
  let counts = new Float64Array(Math.min(FIRST_CAPACITY, capacity) * PENDING_WIDTH);
  let minutes = new Float64Array(Math.min(FIRST_CAPACITY, capacity));
  const keys: string[] = [];
  const owners: (string | null)[] = [];
  let byMinute = new Map<number, Map<string, number>>();
  let size = 0;

  function grow(): void {
    const slots = Math.min(capacity, minutes.length * 2);
    const nextCounts = new Float64Array(slots * PENDING_WIDTH);
    nextCounts.set(counts);
    counts = nextCounts;
    const nextMinutes = new Float64Array(slots);
    nextMinutes.set(minutes);
    minutes = nextMinutes;
  }

  return {
    get size() {
      return size;
    },
    get counts() {
      return counts;
    },
    minute(start: number): Map<string, number> {
      let cells = byMinute.get(start);
      if (cells === undefined) byMinute.set(start, (cells = new Map()));
      return cells;
    },
    slot(cells: Map<string, number>, start: number, keyId: string, ownerId: string | null): number {
      if (size === minutes.length) grow();
      const slot = size++;
      cells.set(keyId, slot);
      minutes[slot] = start;
      keys.push(keyId);
      owners.push(ownerId);
      return slot;
    },
    seal(): void {
      byMinute = new Map();
    },
    deltas(from: number, to: number): UsageDelta[] {
      const out: UsageDelta[] = [];
      for (let slot = from; slot < to; slot++) {
        const at = slot * PENDING_WIDTH;
        out.push({
          keyId: keys[slot] as string,
          ownerId: owners[slot] as string | null,
          minute: minutes[slot] as number,
          requests: Array.from(counts.subarray(at, at + CREDITS)),
          credits: counts[at + CREDITS] as number,
        });
      }
      return out;
    },
  };
}
