/**
 * A bounded LRU map with a per-entry deadline, on one `Map`: a `Map` iterates in
 * insertion order, so re-inserting on a hit moves an entry to the end and the first key
 * is the least recently used. No timers: expired entries are dropped when met, or pushed
 * out by the size bound, so memory stays flat whatever the traffic.
 *
 * A hit re-inserts only when the entry has drifted into the older half (at least
 * `max / 2` moves or inserts since its own), so a hot key costs one `Map.get`, not a
 * delete and a set, on most hits. An entry in the newer half is never the next to go,
 * so the eviction order stays LRU where it matters.
 * @module
 */

interface Slot<V> {
  value: V;
  /** Epoch ms after which the entry is gone. */
  until: number;
  /** Value of the move counter when the entry was last (re)inserted. */
  tick: number;
}

/** LRU cache with TTL. Not exported from the package. */
export class LruCache<V> {
  readonly #max: number;
  readonly #half: number;
  readonly #map = new Map<string, Slot<V>>();
  #tick = 0;

  constructor(max: number) {
    this.#max = max;
    this.#half = Math.max(1, Math.floor(max / 2));
  }

  get size(): number {
    return this.#map.size;
  }

  /** The live value for `key` at time `now`, marking it most recently used. */
  get(key: string, now: number): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    if (now >= slot.until) {
      this.#map.delete(key);
      return undefined;
    }
    if (this.#tick - slot.tick >= this.#half) {
      this.#map.delete(key);
      slot.tick = ++this.#tick;
      this.#map.set(key, slot);
    }
    return slot.value;
  }

  /** Stores `value` until `until` (epoch ms), evicting the least recently used entry when full. */
  set(key: string, value: V, until: number): void {
    if (this.#max <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, { value, until, tick: ++this.#tick });
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
