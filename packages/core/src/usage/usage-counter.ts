/**
 * The usage counter: fed one `DecisionEvent` per limiter decision (`onDecision`), it adds
 * them up in memory per key and minute, and every `flushIntervalMs` hands the store the
 * deltas since the last flush, as ONE `add` (one statement on PostgreSQL). No request
 * writes anything: the cost on the request's path is a Map lookup and two additions.
 *
 * Several instances each flush their own deltas and the store adds them up, so the totals
 * are exact across instances. A flush that fails keeps its deltas and the next one
 * retries them (merged with what came since), up to `maxPendingKeys` key-minutes; past
 * that, the oldest minutes are dropped and counted in one warning. A crash loses what was
 * counted since the last flush began: at most one interval's requests.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { consoleWarnLogger, errorLine } from '../internal/console-warn.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import type { UsageDelta, UsageStore } from './types.ts';
import { USAGE_OUTCOMES, usageBucketStart } from './usage-range.ts';

/** Where the counter reports a failing store (never with key text: ids and counts only). */
export interface UsageLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `createUsageCounter`. */
export interface UsageCounterOptions {
  /** Where the deltas go: `createMemoryUsageStore()`, or `createPostgresUsageStore` of `@keyset/postgres`. */
  store: UsageStore;
  /** How often the deltas are written (10 ms to 1 h): what a crash may lose. @default 5000 */
  flushIntervalMs?: number;
  /** How often, after a flush, buckets past their retention are deleted (`store.prune`); `false`: never (prune yourself). @default 3600000 */
  pruneIntervalMs?: number | false;
  /** Key-minutes held in memory at most, retried deltas included; past it, the oldest are dropped (and logged). @default 100000 */
  maxPendingKeys?: number;
  /** @default Date.now */
  clock?: Clock;
  /** @default console.warn, tagged [keyset] */
  logger?: UsageLogger;
  /**
   * Called after each flush that had counts to write or dropped some, for metrics: how late
   * the counts reached the store, and what was lost. A hook that throws is ignored.
   * @default none
   */
  onFlush?: (event: UsageFlushEvent) => void;
}

/** One flush, as `onFlush` receives it. Ids and counts only. */
export interface UsageFlushEvent {
  /** `false` when the store refused the write: the counts are kept and retried. */
  ok: boolean;
  /** Key-minutes written (or, when `ok` is false, kept for the next flush). */
  keys: number;
  /** Milliseconds from the oldest count in this write being made to the flush ending: how far behind the store is. */
  lagMs: number;
  /** Requests whose counts were dropped (over `maxPendingKeys`) since the previous event. */
  droppedRequests: number;
}

const USAGE_COUNTER_OPTIONS = {
  store: true,
  flushIntervalMs: true,
  pruneIntervalMs: true,
  maxPendingKeys: true,
  clock: true,
  logger: true,
  onFlush: true,
} as const satisfies KnownOptions<UsageCounterOptions>;

/** The counter. `record` is a plain function: pass it as the limiter's `onDecision`. */
export interface UsageCounter {
  /** Counts one decision (synchronous, allocation-free once the key has a slot this minute). Ignored after `close`. */
  readonly record: (event: DecisionEvent) => void;
  /** Writes the deltas counted so far (waits for a flush already running first). Rejects when the store does; the deltas are kept. */
  flush(): Promise<void>;
  /** Stops the timer and flushes what is left. Resolves even if that last flush fails (it is logged). */
  close(): Promise<void>;
  /** Key-minutes waiting for a flush. */
  readonly pending: number;
}

/** One key's counts in one minute. */
interface Cell {
  ownerId: string | null;
  requests: number[];
  credits: number;
}

const OUTCOME_INDEX: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(USAGE_OUTCOMES.map((outcome, i) => [outcome, i])));

/**
 * Creates a usage counter writing to `store`.
 *
 * @example
 * ```ts
 * const usage = createUsageCounter({ store: createMemoryUsageStore(), flushIntervalMs: 5000 });
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, onDecision: usage.record });
 * // on shutdown, before closing the database:
 * await usage.close();
 * ```
 */
export function createUsageCounter(options: UsageCounterOptions): UsageCounter {
  assertKnownOptions('createUsageCounter', options, USAGE_COUNTER_OPTIONS);
  const { store, flushIntervalMs = 5000, pruneIntervalMs = 3_600_000, maxPendingKeys = 100_000, clock = systemClock, logger = consoleWarnLogger, onFlush } = options;
  if (typeof store?.add !== 'function' || typeof store.prune !== 'function') {
    throw new ConfigError('store must be a usage store (add, read, top, prune), e.g. createMemoryUsageStore()');
  }
  if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 10 || flushIntervalMs > 3_600_000) {
    throw new ConfigError(`flushIntervalMs must be a number of milliseconds from 10 to 3600000, got ${String(flushIntervalMs)}`);
  }
  if (pruneIntervalMs !== false && (!Number.isFinite(pruneIntervalMs) || pruneIntervalMs < 1000)) {
    throw new ConfigError(`pruneIntervalMs must be false or at least 1000 milliseconds, got ${String(pruneIntervalMs)}`);
  }
  if (!Number.isSafeInteger(maxPendingKeys) || maxPendingKeys < 1) {
    throw new ConfigError(`maxPendingKeys must be a positive integer, got ${String(maxPendingKeys)}`);
  }
  if (typeof clock !== 'function') throw new ConfigError('clock must be a function returning epoch milliseconds');
  if (typeof logger?.warn !== 'function') throw new ConfigError('logger must have a warn(details, message) method');
  if (onFlush !== undefined && typeof onFlush !== 'function') throw new ConfigError('onFlush must be a function (event) => void');

  /** Minute start → key id → counts: every delta not yet written. */
  let pending = new Map<number, Map<string, Cell>>();
  let cells = 0;
  // The minute being counted, kept apart so a request looks up one Map, not two.
  let minuteStart = Number.NaN;
  let minuteEnd = Number.NaN;
  let current = new Map<string, Cell>();
  let dropped = 0;
  /** Dropped requests not yet told to `onFlush`. */
  let droppedUnreported = 0;
  /** When the oldest count not yet written was made (NaN: none pending). */
  let oldestPendingAt = Number.NaN;
  let failing = false;
  let flushing: Promise<void> | undefined;
  let timer: unknown;
  let closed = false;
  let prunedAt = clock();

  function enterMinute(now: number): void {
    minuteStart = usageBucketStart(now, 'minute');
    minuteEnd = minuteStart + 60_000;
    let cellsOfMinute = pending.get(minuteStart);
    if (cellsOfMinute === undefined) pending.set(minuteStart, (cellsOfMinute = new Map()));
    current = cellsOfMinute;
  }

  function record(event: DecisionEvent): void {
    const index = OUTCOME_INDEX[event.outcome];
    if (index === undefined || closed) return;
    const now = clock();
    // Not `>=`/`<` alone: NaN (before the first event) fails both and enters the minute.
    if (!(now >= minuteStart && now < minuteEnd)) enterMinute(now);
    let cell = current.get(event.keyId);
    if (cell === undefined) {
      if (cells >= maxPendingKeys) {
        dropped++;
        droppedUnreported++;
        return;
      }
      cell = { ownerId: event.ownerId ?? null, requests: [0, 0, 0, 0, 0, 0], credits: 0 };
      current.set(event.keyId, cell);
      // The first count since the last write starts the lag: every later count is younger.
      if (cells === 0 && Number.isNaN(oldestPendingAt)) oldestPendingAt = now;
      cells++;
    }
    (cell.requests[index] as number)++;
    cell.credits += event.cost;
  }

  /** Adds `deltas` back (a failed flush), then drops the oldest minutes past the bound. */
  function restore(deltas: readonly UsageDelta[]): void {
    for (const delta of deltas) {
      let cellsOfMinute = pending.get(delta.minute);
      if (cellsOfMinute === undefined) pending.set(delta.minute, (cellsOfMinute = new Map()));
      const cell = cellsOfMinute.get(delta.keyId);
      if (cell === undefined) {
        cellsOfMinute.set(delta.keyId, { ownerId: delta.ownerId, requests: [...delta.requests], credits: delta.credits });
        cells++;
      } else {
        delta.requests.forEach((n, i) => ((cell.requests[i] as number) += n));
        cell.credits += delta.credits;
      }
    }
    if (cells <= maxPendingKeys) return;
    for (const minute of [...pending.keys()].sort((a, b) => a - b)) {
      const cellsOfMinute = pending.get(minute) as Map<string, Cell>;
      const lost = [...cellsOfMinute.values()].reduce((sum, cell) => sum + cell.requests.reduce((a, b) => a + b, 0), 0);
      dropped += lost;
      droppedUnreported += lost;
      cells -= cellsOfMinute.size;
      pending.delete(minute);
      if (minute === minuteStart) minuteStart = minuteEnd = Number.NaN;
      if (cells <= maxPendingKeys) break;
    }
  }

  /** Tells `onFlush` about one write; a hook that throws cannot fail the flush. */
  function report(ok: boolean, keys: number, since: number): void {
    if (onFlush === undefined) return;
    const event: UsageFlushEvent = { ok, keys, lagMs: Number.isNaN(since) ? 0 : Math.max(0, clock() - since), droppedRequests: droppedUnreported };
    droppedUnreported = 0;
    try {
      onFlush(event);
    } catch {
      // Metrics are not worth a lost flush.
    }
  }

  async function flushOnce(): Promise<void> {
    if (cells > 0) {
      const taken = pending;
      const since = oldestPendingAt;
      pending = new Map();
      cells = 0;
      oldestPendingAt = Number.NaN;
      minuteStart = minuteEnd = Number.NaN;
      const deltas: UsageDelta[] = [];
      for (const [minute, cellsOfMinute] of taken) {
        for (const [keyId, cell] of cellsOfMinute) deltas.push({ keyId, ownerId: cell.ownerId, minute, requests: cell.requests, credits: cell.credits });
      }
      try {
        await store.add(deltas);
      } catch (error) {
        restore(deltas);
        // Kept for the next flush: their age still counts from when they were made.
        oldestPendingAt = Number.isNaN(oldestPendingAt) ? since : Math.min(oldestPendingAt, since);
        report(false, deltas.length, since);
        throw error;
      }
      report(true, deltas.length, since);
    } else if (droppedUnreported > 0) {
      report(true, 0, Number.NaN);
    }
    if (failing || dropped > 0) {
      // Once per outage, not per flush: the first failure warned, this says it is over.
      logger.warn({ droppedRequests: dropped }, dropped > 0 ? 'usage counts were dropped: more key-minutes were pending than maxPendingKeys holds (a long store outage, or more active keys than that)' : 'usage flush succeeded again');
      failing = false;
      dropped = 0;
    }
    if (pruneIntervalMs !== false && clock() - prunedAt >= pruneIntervalMs) {
      prunedAt = clock();
      // The counts are written: a failing prune only leaves old rows for the next one.
      await store.prune(prunedAt).catch((error: unknown) => logger.warn({ error: errorLine(error) }, 'usage prune failed; retried at the next prune interval'));
    }
  }

  function flush(): Promise<void> {
    // One flush at a time; a call during one waits for it, then runs its own.
    const next = (flushing ?? Promise.resolve()).then(flushOnce);
    const settled: Promise<void> = next.then(
      () => undefined,
      () => undefined,
    );
    flushing = settled;
    void settled.then(() => {
      if (flushing === settled) flushing = undefined;
    });
    return next;
  }

  function reportFailure(error: unknown): void {
    if (failing) return;
    failing = true;
    logger.warn({ error: errorLine(error), pendingKeys: cells }, 'usage flush failed; the counts are kept and retried at the next flush');
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      flush().catch(reportFailure).finally(schedule);
    }, flushIntervalMs);
    // Node's timer has `unref` (a flush must not keep the process alive); the DOM types say `number`.
    (timer as { unref?: () => void }).unref?.();
  }
  schedule();

  return Object.freeze({
    record,
    flush,
    get pending() {
      return cells;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
      await flush().catch(reportFailure);
    },
  });
}
