/**
 * The memory rate-limit store as it was before its TATs moved into one array per
 * generation (commit 235d1a3: a map of cells per policy name), kept as the reference the
 * differential property test holds the current store to: the same decisions, the same
 * errors, the same size, through generations, drops and clears.
 * Test support only: not part of the package.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError } from '../errors.ts';
import { evaluateGcra, evaluateOne, gcraParameters, prepareGcra, type GcraParameters } from './gcra.ts';
import type { MemoryRateLimitStore, MemoryRateLimitStoreOptions } from './memory-store.ts';
import type { RateLimitDecision, RateLimitPolicy, RateLimitRequest } from './types.ts';

function checkCost(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new ConfigError(`cost must be a non-negative integer, got ${String(cost)}`);
}

/** One (key, policy) entry: its TAT in µs, updated in place. */
interface Cell {
  tat: number;
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
export function createReferenceMemoryRateLimitStore(options: MemoryRateLimitStoreOptions = {}): MemoryRateLimitStore {
  const { max = 100_000, clock = systemClock } = options;
  if (!Number.isSafeInteger(max) || max < 1) throw new ConfigError(`max must be a positive integer, got ${String(max)}`);
  // Each generation holds at most floor(max / 2) entries, so both together hold ≤ max.
  // A generation maps policy name → key → TAT: the key (an identity id, usually the same
  // string object request after request, its hash cached by V8) is looked up as it is,
  // instead of building and hashing a `name + key` string per request.
  const generation = Math.max(1, Math.floor(max / 2));
  // Each entry is a cell holding the TAT, updated in place: a hot key costs one lookup
  // per decision, not a lookup and then a `set` that finds the entry again.
  let young = new Map<string, Map<string, Cell>>();
  let old = new Map<string, Map<string, Cell>>();
  let youngSize = 0;
  let oldSize = 0;

  function read(name: string, key: string): number | undefined {
    return (young.get(name)?.get(key) ?? old.get(name)?.get(key))?.tat;
  }

  function write(name: string, key: string, tat: number): void {
    let entries = young.get(name);
    const cell = entries?.get(key);
    if (cell !== undefined) {
      cell.tat = tat;
      return;
    }
    if (old.get(name)?.delete(key) === true) oldSize--;
    if (youngSize >= generation) {
      old = max >= 2 ? young : new Map();
      oldSize = max >= 2 ? youngSize : 0;
      young = new Map();
      youngSize = 0;
      entries = undefined;
    }
    if (entries === undefined) {
      entries = new Map();
      young.set(name, entries);
    }
    entries.set(key, { tat });
    youngSize++;
  }

  function drop(name: string, key: string): void {
    if (young.get(name)?.delete(key) === true) youngSize--;
    if (old.get(name)?.delete(key) === true) oldSize--;
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
    // The young generation's entry, looked up once: a hot key is read and updated there
    // with one lookup each, not read, then found again with `has` before the update.
    const inYoung = young.get(name)?.get(key);
    const stored = inYoung !== undefined ? inYoung.tat : old.get(name)?.get(key)?.tat;
    const tat = stored !== undefined && stored > now ? stored : undefined;
    const decision = evaluateOne(parameters, tat, now, cost);
    const next = decision.allowed ? (tat ?? now) + cost * parameters.emissionMicros : tat;
    if (inYoung !== undefined && next !== undefined && next > now) inYoung.tat = next;
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
      store((parameters[i] as GcraParameters).name, r.key, outcome.allowed ? (outcome.newTats[i] as number) : pairs[i]?.tat, now);
    });
    return outcome.decisions;
  }

  return Object.freeze({
    decide,
    get size(): number {
      return youngSize + oldSize;
    },
    clear(): void {
      young = new Map();
      old = new Map();
      youngSize = oldSize = 0;
    },
    close(): Promise<void> {
      young = new Map();
      old = new Map();
      youngSize = oldSize = 0;
      return Promise.resolve();
    },
  });
}
