/**
 * The verifier's caches, keyed by a key's digest (a 32-character binary string, see
 * `internal/hex.ts`) but looked up by a 30-bit integer taken from it: a `Map` finds a
 * small-integer key without hashing a fresh 32-character string and without reading the
 * stored key's characters to compare them, which was half of what a lookup by the string
 * cost. Each entry keeps its full digest, and a lookup answers only when that digest
 * equals the one asked for, so an entry is never found for another key.
 *
 * Two live digests sharing the integer (about one pair in 20 for 10,000 entries; grows with
 * the square of the count) cannot share the main map: the one that came second is kept in
 * a small overflow cache by its full digest, so neither ever misses for the other's sake.
 * The overflow holds at most `max(16, max / 1024)` entries (expected pairs: 5 at 100,000,
 * 500 at a million), and counts toward `max`: the two together never hold more than
 * `max` entries (the documented bound of `cache.max` and `cache.negativeMax`). The integer is mixed with a per-cache random salt,
 * so which of the `Map`'s buckets a digest lands in cannot be chosen (V8 hashes integer
 * keys unseeded).
 * @module
 */
import { LruCache, type LruSlot } from '../../internal/lru-cache.ts';

/** The fields the cache keeps on each value (set by `set`). */
export interface DigestSlot extends LruSlot {
  /** The full binary digest the entry was stored under. */
  digestKey: string;
}

/** Bounded cache with TTL, by binary digest (see the module comment). Internal. */
export class DigestCache<V extends DigestSlot> {
  readonly #main: LruCache<V, number>;
  /** Entries whose integer a different live digest holds in `#main`: rare, so usually empty. */
  readonly #overflow: LruCache<V>;
  #salt = 0;
  /** Draws the salt, on the first `set` (see the constructor); `undefined` once drawn. */
  #drawSalt: (() => number) | undefined;
  readonly #max: number;

  /**
   * `salt`: random bits (any integer; its low 30 bits are used), or a function drawing
   * them, called on the first `set`: an empty cache answers nothing whatever its salt, and
   * a keyring made at start-up draws no random numbers then (workerd forbids them in a
   * worker's global scope).
   */
  constructor(max: number, salt: number | (() => number)) {
    this.#main = new LruCache<V, number>(max);
    this.#overflow = new LruCache<V>(max > 0 ? Math.max(16, Math.ceil(max / 1024)) : 0);
    if (typeof salt === 'function') this.#drawSalt = salt;
    else this.#salt = salt & 0x3fffffff;
    this.#max = max;
  }

  get size(): number {
    return this.#main.size + this.#overflow.size;
  }

  /** The integer a digest is looked up by: its first 30 bits, salted. Always a small integer (Smi). */
  #slotOf(digest: string): number {
    const bits = (digest.charCodeAt(0) << 22) | (digest.charCodeAt(1) << 14) | (digest.charCodeAt(2) << 6) | (digest.charCodeAt(3) >>> 2);
    return bits ^ this.#salt;
  }

  /** The live value stored under `digest` at time `now`, marking it used. */
  get(digest: string, now: number): V | undefined {
    const value = this.#main.get(this.#slotOf(digest), now);
    if (value !== undefined && value.digestKey === digest) return value;
    return this.#overflow.size === 0 ? undefined : this.#overflow.get(digest, now);
  }

  /** Stores `value` under `digest` until `until` (epoch ms), replacing that digest's entry; see `LruCache.set`. */
  set(digest: string, value: V, until: number, now: number): void {
    if (this.#drawSalt !== undefined) {
      // Nothing is held before the first set (clear() may empty it later, with the salt kept).
      this.#salt = this.#drawSalt() & 0x3fffffff;
      this.#drawSalt = undefined;
    }
    value.digestKey = digest;
    const slot = this.#slotOf(digest);
    const held = this.#main.peek(slot);
    if (held !== undefined && held.digestKey !== digest && now < held.until) {
      this.#overflow.set(digest, value, until);
      // Over the bound: one entry of the main map goes (never the one just set).
      if (this.size > this.#max) this.#main.evictOne();
      return;
    }
    if (this.#overflow.size !== 0) this.#overflow.delete(digest);
    this.#main.set(slot, value, until);
    // Over the bound: one entry of the overflow goes (the one just set is in the main map).
    if (this.size > this.#max) this.#overflow.evictOne();
  }

  /** Drops the entry of `digest`, if held (never another digest's). */
  delete(digest: string): void {
    const slot = this.#slotOf(digest);
    if (this.#main.peek(slot)?.digestKey === digest) this.#main.delete(slot);
    else if (this.#overflow.size !== 0) this.#overflow.delete(digest);
  }

  /** Drops every entry whose value matches; returns how many went. */
  deleteWhere(predicate: (value: V) => boolean): number {
    return this.#main.deleteWhere(predicate) + this.#overflow.deleteWhere(predicate);
  }

  clear(): void {
    this.#main.clear();
    this.#overflow.clear();
  }
}
