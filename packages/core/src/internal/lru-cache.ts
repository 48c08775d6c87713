/**
 * A bounded LRU map with a per-entry deadline, on one `Map`: a `Map` iterates in
 * insertion order, so re-inserting on a hit moves an entry to the end and the first key
 * is always the least recently used. No timers: expired entries are dropped when met,
 * or pushed out by the size bound, so memory stays flat whatever the traffic.
 * @module
 */

interface Slot<V> {
  value: V;
  /** Epoch ms after which the entry is gone. */
  until: number;
}

/** LRU cache with TTL. Not exported from the package. */
export class LruCache<V> {
  readonly #max: number;
  readonly #map = new Map<string, Slot<V>>();

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The live value for `key` at time `now`, marking it most recently used. */
  get(key: string, now: number): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    this.#map.delete(key);
    if (now >= slot.until) return undefined;
    this.#map.set(key, slot);
    return slot.value;
  }

  /** Stores `value` until `until` (epoch ms), evicting the least recently used entry when full. */
  set(key: string, value: V, until: number): void {
    if (this.#max <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, { value, until });
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }

  delete(key: string): boolean {
    return this.#map.delete(key);
  }

  /** Drops every entry whose value matches; returns how many went. O(size), for rare events. */
  deleteWhere(predicate: (value: V) => boolean): number {
    let removed = 0;
    for (const [key, slot] of this.#map) {
      if (predicate(slot.value)) {
        this.#map.delete(key);
        removed++;
      }
    }
    return removed;
  }

  clear(): void {
    this.#map.clear();
  }
}
