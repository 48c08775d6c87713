/**
 * In-process GCRA store: one number (the TAT, µs) per (key, policy name), no timers.
 * An entry whose TAT has passed is indistinguishable from an absent one and is dropped
 * when met.
 *
 * Bounded, least-recently-used-ish, in two generations of `max / 2` entries each (the
 * quick-lru scheme): a touched entry is updated in place in the young map, or moved
 * there from the old one; when the young map is full it becomes the old one and the
 * previous old generation (entries untouched for a whole generation) is dropped at once.
 * Why not one Map with delete + re-insert on every touch: V8 keeps a deleted entry in
 * its bucket's chain until the next rehash, so re-inserting one hot key grows that
 * chain by one per request (measured: 36 µs per request at 10k entries, 240 µs at 100k).
 *
 * A key's map holds a small integer, the entry's slot in its generation's `Float64Array`
 * of TATs, not an object per entry: with thousands of keys taking turns, that object (and
 * the boxed double inside it) was one more cache miss per decision after the map's own.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { advances, evaluateGcra, evaluateOne, gcraParameters, prepareGcra, type GcraParameters } from './gcra.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest, RateLimitStore } from './types.ts';

function checkCost(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new ConfigError(`cost must be a non-negative integer, got ${String(cost)}`);
}

/**
 * One generation of entries: policy name → key → slot, each slot an index into `tats`
 * (the TATs in µs, side by side in one array), so reading or updating an entry reaches
 * no object of its own (see the module comment).
 */
interface Generation {
  names: Map<string, Map<string, number>>;
  /** TAT per slot, µs. Grows by doubling up to the generation's size. */
  tats: Float64Array;
  /** Slots freed by a `drop`, handed out again before new ones. */
  free: number[];
  /** Slots handed out so far: the next new one. */
  next: number;
  /** Entries held. */
  size: number;
}

/** Slots to start with: a store of a handful of keys (every limiter's `local` fallback) stays small. */
const FIRST_SLOTS = 64;

function emptyGeneration(tats: Float64Array = new Float64Array(0)): Generation {
  return { names: new Map(), tats, free: [], next: 0, size: 0 };
}

/** Options of `createMemoryRateLimitStore`. */
export interface MemoryRateLimitStoreOptions {
  /**
   * Most (key, policy) entries kept. Entries untouched while `max / 2` others were
   * written are dropped; if one was still live, its key starts again with a full burst.
   * Size it above the number of keys active within one window.
   * @default 100_000
   */
  max?: number;
  /**
   * Time source (epoch ms).
   * @default systemClock
   */
  clock?: Clock;
}

/** Every name `MemoryRateLimitStoreOptions` knows, checked when the store is made. */
const MEMORY_STORE_OPTIONS = { max: true, clock: true } as const satisfies KnownOptions<MemoryRateLimitStoreOptions>;

/** The memory store: synchronous `decide`, plus its size for monitoring. */
export interface MemoryRateLimitStore extends RateLimitStore {
  decide(requests: readonly RateLimitRequest[], cost?: number): RateLimitDecision[];
  /** Entries currently held (live or not yet dropped). */
  readonly size: number;
  /** Drops every entry. */
  clear(): void;
  close(): Promise<void>;
}

/**
 * Creates an in-process rate-limit store. Right for one instance; several instances
 * each keep their own counts (use `@keyset/redis` to share them).
 *
 * @example
 * ```ts
 * const store = createMemoryRateLimitStore({ max: 50_000 });
 * const [decision] = store.decide([{ key: 'key_123', policy: { limit: 100, windowSeconds: 60 } }]);
 * ```
 */
export function createMemoryRateLimitStore(options: MemoryRateLimitStoreOptions = {}): MemoryRateLimitStore {
  assertKnownOptions('createMemoryRateLimitStore', options, MEMORY_STORE_OPTIONS);
  const { max = 100_000, clock = systemClock } = options;
  if (!Number.isSafeInteger(max) || max < 1) throw new ConfigError(`max must be a positive integer, got ${String(max)}`);
  // Each generation holds at most floor(max / 2) entries, so both together hold ≤ max.
  // A generation maps policy name → key → TAT: the key (an identity id, usually the same
  // string object request after request, its hash cached by V8) is looked up as it is,
  // instead of building and hashing a `name + key` string per request.
  const generation = Math.max(1, Math.floor(max / 2));
  // Each entry is a slot holding the TAT, updated in place: a hot key costs one lookup
  // per decision, not a lookup and then a `set` that finds the entry again.
  let young = emptyGeneration();
  let old = emptyGeneration();

  function read(name: string, key: string): number | undefined {
    const inYoung = young.names.get(name)?.get(key);
    return inYoung !== undefined ? young.tats[inYoung] : readOld(name, key);
  }

  function readOld(name: string, key: string): number | undefined {
    const inOld = old.names.get(name)?.get(key);
    return inOld === undefined ? undefined : old.tats[inOld];
  }

  /** Removes (name, key) from `g`, freeing its slot. */
  function remove(g: Generation, name: string, key: string): void {
    const entries = g.names.get(name);
    const slot = entries?.get(key);
    if (slot === undefined) return;
    (entries as Map<string, number>).delete(key);
    g.free.push(slot);
    g.size--;
  }

  function write(name: string, key: string, tat: number): void {
    let entries = young.names.get(name);
    const slot = entries?.get(key);
    if (slot !== undefined) {
      young.tats[slot] = tat;
      return;
    }
    remove(old, name, key);
    if (young.size >= generation) {
      // The old generation goes at once; its array serves the new young one.
      const dropped = old;
      old = max >= 2 ? young : emptyGeneration();
      young = emptyGeneration(dropped.tats);
      entries = undefined;
    }
    if (entries === undefined) {
      entries = new Map();
      young.names.set(name, entries);
    }
    let at = young.free.pop();
    if (at === undefined) {
      at = young.next++;
      // Never more than `generation` slots: at most that many entries live at once, and
      // freed slots are handed out first.
      if (at >= young.tats.length) young.tats = grown(young.tats);
    }
    young.tats[at] = tat;
    entries.set(key, at);
    young.size++;
  }

  /** A copy of `tats` with twice the room (at least FIRST_SLOTS, at most `generation`). */
  function grown(tats: Float64Array): Float64Array {
    const bigger = new Float64Array(Math.min(generation, Math.max(FIRST_SLOTS, tats.length * 2)));
    bigger.set(tats);
    return bigger;
  }

  function drop(name: string, key: string): void {
    remove(young, name, key);
    remove(old, name, key);
  }

  /** Keeps a pair's TAT when it is still ahead of now; drops it otherwise. */
  function store(name: string, key: string, tat: number | undefined, now: number): void {
    if (tat !== undefined && tat > now) write(name, key, tat);
    // Dead, or a cost-0 peek on an idle key: nothing worth keeping.
    else drop(name, key);
  }

  /** One pair (every request of a single-policy limiter): no arrays, no pair objects. */
  function decideOne(request: RateLimitRequest, cost: number): RateLimitDecision[] {
    // The checks of prepareGcra, in its order, so errors read the same.
    checkCost(cost);
    return decidePair(request.key, request.policy, cost);
  }

  /** The rest of `decideOne`, once `cost` is checked. */
  function decidePair(key: string, policy: RateLimitPolicy, cost: number): RateLimitDecision[] {
    if (typeof key !== 'string') throw new ConfigError(`A rate-limit key must be a string, got ${typeof key}`);
    const parameters = gcraParameters(policy);
    if (cost > parameters.burst) {
      throw new ConfigError(`cost ${cost} exceeds the burst ${parameters.burst} of policy "${parameters.name}": it could never be admitted`);
    }
    const now = Math.round(clock() * 1000);
    const name = parameters.name;
    // The young generation's slot, looked up once: a hot key is read and updated there
    // with one lookup, not read, then found again with `has` before the update.
    const tats = young.tats;
    const inYoung = young.names.get(name)?.get(key);
    const stored = inYoung !== undefined ? tats[inYoung] : readOld(name, key);
    const tat = stored !== undefined && stored > now ? stored : undefined;
    const decision = evaluateOne(parameters, tat, now, cost);
    const next = decision.allowed ? (tat ?? now) + cost * parameters.emissionMicros : tat;
    if (inYoung !== undefined && next !== undefined && next > now) tats[inYoung] = next;
    else store(name, key, next, now);
    return [decision];
  }

  function decide(requests: readonly RateLimitRequest[], cost = 1): RateLimitDecision[] {
    if (Array.isArray(requests) && requests.length === 1) return decideOne(requests[0] as RateLimitRequest, cost);
    const parameters = prepareGcra(requests, cost);
    const now = Math.round(clock() * 1000);
    const pairs = requests.map((r, i) => {
      const tat = read((parameters[i] as GcraParameters).name, r.key);
      return { parameters: parameters[i] as GcraParameters, tat: tat !== undefined && tat > now ? tat : undefined };
    });
    const outcome = evaluateGcra(pairs, now, cost);
    requests.forEach((r, i) => {
      const p = parameters[i] as GcraParameters;
      store(p.name, r.key, advances(outcome, p) ? (outcome.newTats[i] as number) : pairs[i]?.tat, now);
    });
    return outcome.decisions;
  }

  function clear(): void {
    young = emptyGeneration();
    old = emptyGeneration();
  }

  return Object.freeze({
    decide,
    get size(): number {
      return young.size + old.size;
    },
    clear,
    close(): Promise<void> {
      clear();
      return Promise.resolve();
    },
  });
}
