/**
 * A timeout that measures how long a remote service has been **silent**, not how long one
 * call has waited. A call fails once no call through the same watch has been answered for
 * `ms` since it was sent (or after `ms × HARD_CAP_FACTOR` in all). So a loaded server
 * whose answers keep arriving, only later than usual, never times out, while a frozen or
 * unreachable one does after `ms`.
 *
 * Also immune to our own event loop: when a busy loop runs the timer late, the reply may
 * already sit unread in the socket. The timer therefore never decides by itself: it
 * schedules a check one macrotask later, after pending I/O has been read.
 *
 * Web-standard timers and `performance.now()` only, so it runs on every runtime.
 * @module
 */

/** How much longer than `ms` a call may wait in all while other calls keep being answered. */
export const HARD_CAP_FACTOR = 5;

/** Watches one service's answers; `wait` bounds a call by the service's silence. */
export interface SilenceWatch {
  /**
   * Resolves or rejects as `promise` does, or rejects with a `TimeoutError` once the
   * service has been silent for the watch's `ms`. A late settlement is swallowed.
   */
  wait<T>(promise: Promise<T>): Promise<T>;
}

/** Creates a watch for one service (one store, one client). `what` names it in the error. */
export function createSilenceWatch(ms: number, what: string): SilenceWatch {
  let lastAnswerAt = Number.NEGATIVE_INFINITY;

  return Object.freeze({
    wait<T>(promise: Promise<T>): Promise<T> {
      const sentAt = performance.now();
      return new Promise<T>((resolve, reject) => {
        let settled = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const arm = (delay: number): void => {
          timer = setTimeout(() => {
            // One macrotask later: replies that arrived while the loop was busy are read first.
            timer = setTimeout(decide, 0);
          }, delay);
        };
        const decide = (): void => {
          if (settled) return;
          const now = performance.now();
          const quietFor = now - Math.max(sentAt, lastAnswerAt);
          const capLeft = sentAt + ms * HARD_CAP_FACTOR - now;
          if (quietFor < ms && capLeft > 0) {
            arm(Math.min(ms - quietFor, capLeft));
            return;
          }
          settled = true;
          const error = new Error(`${what} did not answer within ${ms} ms`);
          error.name = 'TimeoutError';
          reject(error);
        };
        arm(ms);
        promise.then(
          (value) => {
            lastAnswerAt = performance.now();
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            reject(error);
          },
        );
      });
    },
  });
}

/**
 * Rejects with a `TimeoutError` ("`what` did not answer within `ms` ms") after `ms`, timed
 * per call; a late settlement of `promise` is swallowed, never unhandled. For one-off
 * waits (a publish, an acknowledgement); a store's decisions use `createSilenceWatch`.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new Error(`${what} did not answer within ${ms} ms`);
      error.name = 'TimeoutError';
      reject(error);
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
