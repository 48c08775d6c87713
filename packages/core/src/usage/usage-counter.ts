/**
 * The usage counter: fed one `DecisionEvent` per limiter decision (`onDecision`), it adds
 * them up in memory per key and minute, and every `flushIntervalMs` hands the store the
 * deltas since the last flush, as one `add` per 10,000 key-minutes (one statement each on
 * PostgreSQL). No request writes anything: the cost on the request's path is a Map lookup
 * and two additions into a typed array.
 *
 * Several instances each flush their own deltas and the store adds them up, so the totals
 * are exact across instances. Every `add` carries a token (this counter's random instance
 * id and a sequence number) that the store records with the counts: a failed `add` is
 * retried as it was, with the same token, so one that did commit adds nothing the second
 * time. What comes in meanwhile waits for the next batch, up to `maxPendingKeys`
 * key-minutes held in all; past that, new key-minutes are not counted, and the requests
 * refused that way are counted in one warning. A crash loses what was counted since the
 * last flush began: at most one interval's requests.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { consoleWarnLogger, errorLine } from '../internal/console-warn.ts';
import type { DecisionEvent } from '../rate-limit/decision-event.ts';
import { createPendingUsage, PENDING_WIDTH, type PendingUsage } from './pending-usage.ts';
import type { UsageStore } from './types.ts';
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
  /** Key-minutes held in memory at most, a batch waiting for its retry included (a few hundred bytes each at most: no object per key-minute); past it, new key-minutes are not counted (and logged). @default 100000 */
  maxPendingKeys?: number;
  /** @default Date.now */
  clock?: Clock;
  /** @default console.warn, tagged [keyset] */
  logger?: UsageLogger;
  /**
   * Called after each write to the store (one per `add`, a batch of up to 10,000
   * key-minutes), and after a flush that only dropped counts, for metrics: how late the
   * counts reached the store, and what was lost. A hook that throws is ignored.
   * @default none
   */
  onFlush?: (event: UsageFlushEvent) => void;
}

/** One write, as `onFlush` receives it. Ids and counts only. */
export interface UsageFlushEvent {
  /** `false` when the store refused the write: the counts are kept and retried as they were. */
  ok: boolean;
  /** Key-minutes written (or, when `ok` is false, kept for the retry). */
  keys: number;
  /** Milliseconds from the oldest count in this write being made to the write ending: how far behind the store is. */
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

/** The most key-minutes one `add` carries: 30,000 rows on PostgreSQL, well inside a statement timeout. */
const FLUSH_CHUNK = 10_000;
const CREDITS = USAGE_OUTCOMES.length;
/** The longest wait between two tries of a failing store (unless the interval is longer). */
const MAX_RETRY_DELAY_MS = 30_000;

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

  // What a crash may lose is in `unsent`; `batch` is what was taken for writing and not yet
  // confirmed. A batch is written in chunks of FLUSH_CHUNK key-minutes, each with its own
  // sequence number; a chunk that failed is retried as it was, with the same sequence, so a
  // retry of one the store did commit adds nothing. New counts never merge into a batch.
  const instance = crypto.randomUUID();
  let sequence = 0;
  let unsent = createPendingUsage(maxPendingKeys);
  // `since`: when the batch's oldest count was made, for `onFlush`'s lag.
  let batch: { cells: PendingUsage; written: number; sequence: number | undefined; since: number } | undefined;
  /** When the oldest count in `unsent` was made (NaN: none). */
  let oldestUnsentAt = Number.NaN;
  /** Dropped requests not yet told to `onFlush`. */
  let droppedUnreported = 0;
  // The minute being counted, kept apart so a request looks up one Map, not two.
  let minuteStart = Number.NaN;
  let minuteEnd = Number.NaN;
  let current = new Map<string, number>();
  let dropped = 0;
  let failing = false;
  let flushing: Promise<void> | undefined;
  let timer: unknown;
  let closed = false;
  let prunedAt = clock();

  const held = (): number => unsent.size + (batch === undefined ? 0 : batch.cells.size - batch.written);

  function record(event: DecisionEvent): void {
    // A would-be refusal counts by its reason (`would_refuse_rate_limited`, …).
    const index = OUTCOME_INDEX[event.outcome === 'would_refuse' ? `would_refuse_${String(event.reason)}` : event.outcome];
    if (index === undefined || closed) return;
    const now = clock();
    // Not `>=`/`<` alone: NaN (before the first event) fails both and enters the minute.
    if (!(now >= minuteStart && now < minuteEnd)) {
      minuteStart = usageBucketStart(now, 'minute');
      minuteEnd = minuteStart + 60_000;
      current = unsent.minute(minuteStart);
    }
    let slot = current.get(event.keyId);
    if (slot === undefined) {
      // Unsent and unconfirmed together: a batch in doubt still holds its memory.
      if (unsent.size + (batch?.cells.size ?? 0) >= maxPendingKeys) {
        dropped++;
        droppedUnreported++;
        return;
      }
      // The first count since the last batch starts the lag: every later count is younger.
      if (Number.isNaN(oldestUnsentAt)) oldestUnsentAt = now;
      slot = unsent.slot(current, minuteStart, event.keyId, event.ownerId ?? null);
    }
    const counts = unsent.counts;
    const at = slot * PENDING_WIDTH;
    (counts[at + index] as number)++;
    (counts[at + CREDITS] as number) += event.cost;
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

  /** Writes the batch, chunk by chunk, from the first chunk not yet confirmed. */
  async function writeBatch(taken: NonNullable<typeof batch>): Promise<void> {
    while (taken.written < taken.cells.size) {
      const end = Math.min(taken.written + FLUSH_CHUNK, taken.cells.size);
      taken.sequence ??= ++sequence;
      try {
        await store.add(taken.cells.deltas(taken.written, end), { instance, sequence: taken.sequence });
      } catch (error) {
        report(false, taken.cells.size - taken.written, taken.since);
        throw error;
      }
      report(true, end - taken.written, taken.since);
      taken.written = end;
      taken.sequence = undefined;
    }
  }

  async function flushOnce(): Promise<void> {
    // First the batch in doubt, as it was; then what came since, as a new batch.
    if (batch !== undefined) await writeBatch(batch);
    batch = undefined;
    if (unsent.size > 0) {
      const cells = unsent;
      cells.seal();
      unsent = createPendingUsage(maxPendingKeys);
      minuteStart = minuteEnd = Number.NaN;
      batch = { cells, written: 0, sequence: undefined, since: oldestUnsentAt };
      oldestUnsentAt = Number.NaN;
      await writeBatch(batch);
      batch = undefined;
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
    logger.warn({ error: errorLine(error), pendingKeys: held() }, 'usage flush failed; the counts are kept and retried at the next flush');
  }

  // After a failure the next try waits twice as long, up to 30 s: a database that does
  // not answer gets a few statements during an outage, not one per interval. Each try it
  // never answers may stay buffered on its connection until the server reads again.
  let delay = flushIntervalMs;
  const maxDelay = Math.max(flushIntervalMs, MAX_RETRY_DELAY_MS);
  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      flush()
        .then(
          () => (delay = flushIntervalMs),
          (error: unknown) => {
            delay = Math.min(delay * 2, maxDelay);
            reportFailure(error);
          },
        )
        .finally(schedule);
    }, delay);
    // Node's timer has `unref` (a flush must not keep the process alive); the DOM types say `number`.
    (timer as { unref?: () => void }).unref?.();
  }
  schedule();

  return Object.freeze({
    record,
    flush,
    get pending() {
      return held();
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
      await flush().catch(reportFailure);
    },
  });
}
