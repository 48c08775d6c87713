/**
 * Lazy re-hashing after a pepper rotation: a key that verified under an older pepper is
 * written again under the newest one, off the request path. Coalesced like last-use
 * writes (`last-used-writer.ts`): a verification only queues the change, at most once per
 * digest while it is pending or being written; one `rehashDigests` batch per tick writes
 * everything queued. A failed batch is logged and dropped: the key still verifies under
 * its old pepper, and its next store lookup queues it again.
 * @module
 */
import type { KeyStore, PepperRehash } from '../keys/key-store.ts';

/** Where the rehasher reports a failed batch. */
export type RehashErrorHandler = (error: unknown, count: number) => void;

/** Internal: not exported from the package. */
export class PepperRehasher {
  readonly #store: KeyStore;
  readonly #onError: RehashErrorHandler;
  /** Old digest → its change, queued or being written (so each is written once). */
  #known = new Map<string, PepperRehash>();
  #queued: PepperRehash[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #inFlight: Promise<void> | undefined;
  #closed = false;

  constructor(store: KeyStore, onError: RehashErrorHandler) {
    this.#store = store;
    this.#onError = onError;
  }

  /** Queues `change` unless the same old digest is already queued or being written. O(1). */
  queue(change: PepperRehash): void {
    if (this.#closed || this.#known.has(change.from)) return;
    this.#known.set(change.from, change);
    this.#queued.push(change);
    if (this.#timer === undefined && this.#inFlight === undefined) this.#schedule();
  }

  #schedule(): void {
    // A tick, not an interval: a rotation should finish as keys are used, and a batch
    // gathers every change queued by the requests of the same tick.
    const timer: unknown = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, 0);
    if (typeof (timer as { unref?: unknown }).unref === 'function') (timer as { unref(): void }).unref();
    this.#timer = timer as ReturnType<typeof setTimeout>;
  }

  /** Writes everything queued, in batches, until nothing is. Never rejects. */
  flush(): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight.then(() => this.flush());
    if (this.#queued.length === 0) return Promise.resolve();
    const batch = this.#queued;
    this.#queued = [];
    this.#inFlight = (async () => {
      try {
        await this.#store.rehashDigests!(batch);
      } catch (error) {
        try {
          this.#onError(error, batch.length);
        } catch {
          // A throwing handler must not reject the flush (an unhandled rejection from the timer).
        }
      } finally {
        for (const change of batch) this.#known.delete(change.from);
        this.#inFlight = undefined;
      }
    })();
    return this.#inFlight.then(() => this.flush());
  }

  /** Writes what is queued and stops taking changes. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
