/**
 * Change notifications: after a revocation or rotation the keyring tells its listeners
 * (a revocation bus, an audit log) so other instances can drop their cached results.
 * @module
 */
import type { BestEffortLog } from '../keys/internal/best-effort-log.ts';

/** Emitted after a change that other instances' caches must hear about. */
export interface KeyChangeEvent {
  /** `updated`: metadata, IP allowlist, rate limits or quota changed, so cached verified keys are stale. */
  type: 'revoked' | 'rotated' | 'updated';
  /** Identity id. */
  id: string;
}

/** A listener; a returned promise is awaited before `revoke`/`rotate` resolve. */
export type KeyChangeListener = (event: KeyChangeEvent) => void | Promise<void>;

/** Internal: not exported from the package. */
export interface KeyChangeEmitter {
  /** Adds `listener`; returns the function that removes it. */
  subscribe(listener: KeyChangeListener): () => void;
  /** Calls every listener and waits for all. Never rejects: a failing listener is logged. */
  emit(event: KeyChangeEvent): Promise<void>;
}

/** Creates an emitter that reports failing listeners to `log`. */
export function createKeyChangeEmitter(log: BestEffortLog): KeyChangeEmitter {
  const listeners = new Set<KeyChangeListener>();

  function subscribe(listener: KeyChangeListener): () => void {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  async function emit(event: KeyChangeEvent): Promise<void> {
    // One failing listener must not keep the others from hearing, nor fail the change
    // that already happened in the store.
    const results = await Promise.allSettled(
      [...listeners].map(async (listener) => {
        await listener(event);
      }),
    );
    for (const result of results) {
      if (result.status === 'rejected') {
        log.error({ err: result.reason, event: event.type, keyId: event.id }, 'api key change listener failed');
      }
    }
  }

  return Object.freeze({ subscribe, emit });
}
