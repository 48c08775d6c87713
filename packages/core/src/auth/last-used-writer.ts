/**
 * Coalesced `lastUsedAt` writes: a request only records a time in memory; one
 * `touchLastUsed` batch per interval writes the latest use of each digest, so a key
 * used 10,000 times in a minute costs one row update. Failed batches are merged back
 * and retried next interval. Nothing here is ever awaited on the request path.
 *
 * A cached key records its uses on its own `LastUse` (see `track`): a request compares
 * and writes one number, and queues the record once per interval, instead of a map
 * lookup and a map write per request; the records are folded into the pending map when
 * it is read or written out.
 * @module
 */
import type { KeyStore } from '../keys/key-store.ts';

/** Where the writer reports a failed batch. */
export type FlushErrorHandler = (error: unknown, count: number) => void;

/** One digest's latest use, kept on a cached verification and updated in place. */
export interface LastUse {
  readonly digest: string;
  /** Latest use recorded here (epoch ms). */
  at: number;
  /** 1 while queued for the next fold, else 0 (set by the writer). */
  queued: number;
  /** The writer's batch number when this use was last recorded (set by the writer). */
  batch: number;
}

/** Internal: not exported from the package. */
export class LastUsedWriter {
  readonly #store: KeyStore;
  readonly #intervalMs: number;
  readonly #onError: FlushErrorHandler;
  /** digest → latest use (epoch ms) not yet written. */
  #pending = new Map<string, number>();
  /** Records used since the last fold, each once. */
  #queued: LastUse[] = [];
  /** Bumped whenever a flush takes the pending uses: a record's time is then written. */
  #batch = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #inFlight: Promise<void> | undefined;
  #closed = false;
  #lastError: unknown;

  constructor(store: KeyStore, intervalMs: number, onError: FlushErrorHandler) {
    this.#store = store;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  /** Records a use. O(1), synchronous; schedules a flush if none is due. */
  touch(digest: string, at: number): void {
    if (this.#closed) return;
    const seen = this.#pending.get(digest);
    if (seen === undefined || seen < at) this.#pending.set(digest, at);
    if (this.#timer === undefined) this.#schedule();
  }

  /**
   * Records the use `record.at` of `record.digest`, as `touch` does, and readies `record`
   * (which the caller keeps, e.g. on a cache entry) for the next uses of the same digest
   * (`use`), which cost no map operation.
   */
  track(record: LastUse): void {
    record.queued = 0;
    record.batch = this.#batch;
    this.touch(record.digest, record.at);
  }

  /**
   * Records a use on `record` (from `track`), as `touch` would: O(1), synchronous, no map
   * operation. A use no later than the one already recorded in this batch changes nothing.
   */
  use(record: LastUse, at: number): void {
    if (this.#closed) return;
    if (at > record.at) record.at = at;
    else if (record.batch === this.#batch) return;
    record.batch = this.#batch;
    if (record.queued === 0) {
      record.queued = 1;
      this.#queued.push(record);
      if (this.#timer === undefined) this.#schedule();
    }
  }

  /** Moves the queued records' times into the pending map. */
  #fold(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    for (const record of queued) {
      record.queued = 0;
      const seen = this.#pending.get(record.digest);
      if (seen === undefined || seen < record.at) this.#pending.set(record.digest, record.at);
    }
  }

  /** The unwritten latest use of `digest`, if any. */
  pending(digest: string): number | undefined {
    this.#fold();
    return this.#pending.get(digest);
  }

  #schedule(): void {
    const timer: unknown = setTimeout(() => {
      this.#timer = undefined;
      void this.flush().finally(() => {
        if ((this.#pending.size > 0 || this.#queued.length > 0) && !this.#closed && this.#timer === undefined) this.#schedule();
      });
    }, this.#intervalMs);
    // A pending write must not keep a process alive (Node, Bun); capability check, no Node import.
    if (typeof (timer as { unref?: unknown }).unref === 'function') (timer as { unref(): void }).unref();
    this.#timer = timer as ReturnType<typeof setTimeout>;
  }

  /** Writes everything pending in one batch. Never rejects: failures go to `onError` and are retried. */
  flush(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight.then(() => this.flush());
    this.#fold();
    if (this.#pending.size === 0) return Promise.resolve();
    const batch = this.#pending;
    this.#pending = new Map();
    this.#batch++;
    const updates = [...batch].map(([digest, at]) => ({ digest, at: new Date(at) }));
    this.#inFlight = (async () => {
      try {
        await this.#store.touchLastUsed(updates);
        this.#lastError = undefined;
      } catch (error) {
        // Keep the uses for the next interval, merged with any newer ones.
        for (const [digest, at] of batch) {
          const newer = this.#pending.get(digest);
          if (newer === undefined || newer < at) this.#pending.set(digest, at);
        }
        this.#lastError = error;
        try {
          this.#onError(error, updates.length);
        } catch {
          // A throwing handler must not reject the flush: from the timer that is an
          // unhandled rejection (a crash on Node), and the batch above must stay pending.
        }
      } finally {
        this.#inFlight = undefined;
      }
    })();
    return this.#inFlight;
  }

  /**
   * Stops the timer and writes what is pending. Resolves `{ ok: false, error }` if that
   * last write failed (it was already reported to `onError`).
   */
  async close(): Promise<{ ok: true } | { ok: false; error: unknown }> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
    this.#fold();
    return this.#pending.size === 0 ? { ok: true } : { ok: false, error: this.#lastError };
  }
}
