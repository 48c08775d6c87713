/** Rejects with a `TimeoutError` after `ms`; a late settlement of `promise` is swallowed, never unhandled. */
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

/*
 * A copy of @keyset/core's internal silence watch (adapters and stores import only core's
 * public entry): a decision times out when Redis has answered nothing for `ms`, not when
 * one reply is late while others keep arriving, and never because our own event loop ran
 * the timer before reading a reply that had already arrived.
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

/** Lowercase hex SHA-1 through Web Crypto (what `EVALSHA` names a script by). */
export async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
