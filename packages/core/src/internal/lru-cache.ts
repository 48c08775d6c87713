/**
 * A bounded cache with a per-entry deadline, on one `Map`, evicting by second chance
 * (CLOCK): a `Map` iterates in insertion order, so its first key is the one queued
 * longest ago. A hit only marks its entry (one `Map.get` and a field write, never a
 * delete and a set: V8 keeps a deleted entry in its bucket's chain until the next
 * rehash, so moving hot keys on every hit also slows every lookup). When an insert finds
 * the cache full, the oldest-queued entry goes unless it was hit since it was queued;
 * then it is queued again, unmarked, and the next one is looked at.
 *
 * Bounds: never more than `max` entries; the entry just set is never the one evicted; the
 * entry evicted was not hit since it was queued, unless every entry was (then the
 * oldest-queued goes); an entry not hit while `2 · max` new keys are inserted is gone. No timers: expired entries are dropped
 * when met, or pushed out by the size bound, so memory stays flat whatever the traffic.
 * @module
 */

/**
 * The fields the cache keeps on each value it holds (set by `set`): the entry is the
 * value itself, so a hit reads one object, not a slot and then the value.
 */
export interface LruSlot {
  /** Epoch ms after which the entry is gone. */
  until: number;
  /** 1 when hit since it was (re)queued, else 0 (a small integer: no write barrier). */
  hit: number;
}

/**
 * Bounded cache with TTL and second-chance eviction, keyed by strings or, where a key
 * can be a small integer (the key verifier's `DigestCache`, `auth/key-verifier.ts`), by
 * numbers. Not exported from the package.
 */
export class LruCache<V extends LruSlot, K extends string | number = string> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The live value for `key` at time `now`, marking it used. */
  get(key: K, now: number): V | undefined {
    const slot = this.#map.get(key);
    if (slot === undefined) return undefined;
    if (now >= slot.until) {
      this.#map.delete(key);
      return undefined;
    }
    slot.hit = 1;
    return slot;
  }

  /**
   * Stores `value` until `until` (epoch ms), evicting one entry first when full. Writes
   * `until` and `hit` on `value`: give each key its own object.
   */
  set(key: K, value: V, until: number): void {
    if (this.#max <= 0) return;
    // A replaced key frees its own place; a new one needs a free place before it is queued,
    // so the sweep below can never pick the entry being set.
    if (!this.#map.delete(key) && this.#map.size >= this.#max) this.#evictOne();
    value.until = until;
    value.hit = 0;
    this.#map.set(key, value);
  }

  /**
   * Drops the first entry, in queue order, not hit since it was queued; the hit ones it
   * passes are queued again, unmarked. Terminates: after at most one pass all are unmarked.
   */
  #evictOne(): void {
    const map = this.#map;
    for (const [key, slot] of map) {
      map.delete(key);
      if (slot.hit === 0) return;
      slot.hit = 0;
      map.set(key, slot);
    }
  }

  /** Evicts one entry as a full `set` would (see `#evictOne`); nothing when empty. */
  evictOne(): void {
    if (this.#map.size > 0) this.#evictOne();
  }

  /** The value held for `key`, live or not, without marking it used. */
  peek(key: K): V | undefined {
    return this.#map.get(key);
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Drops every entry whose value matches; returns how many went. O(size), for rare events. */
  deleteWhere(predicate: (value: V) => boolean): number {
    let removed = 0;
    for (const [key, slot] of this.#map) {
      if (predicate(slot)) {
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
