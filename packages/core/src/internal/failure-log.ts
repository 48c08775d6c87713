/**
 * Store failures, logged once per interval with a count instead of once per request
 * (logging each one, a Redis outage once wrote 3,206 error lines with stack traces in 12 s
 * from one instance). The first failure of a kind is logged at once, with its error (one stack
 * trace to diagnose from); later ones of the same kind only count, and the next failure
 * after `intervalMs` writes one line with how many there were since the last line and the
 * error as `name: message` text, no stack. When the store answers again, `recovered` writes
 * what was counted and not yet written, and forgets the kind.
 *
 * A kind is the operation plus the error's name and `code` (never its message: messages
 * carry addresses and ids, so one outage would become thousands of kinds). No timer: lines
 * are written from the calls themselves, so nothing outlives the instance, and the state
 * lives on the instance the factory returns (no module state).
 * @module
 */
import type { Clock } from '../clock.ts';

/** Where lines go: a `warn` or `error` method bound to the caller's logger. */
export type FailureLogWrite = (fields: Record<string, unknown>, message: string) => void;

/** Options of `createFailureLog`. */
export interface FailureLogOptions {
  write: FailureLogWrite;
  /** Time source (epoch ms). */
  clock: Clock;
  /**
   * Longest silence about a failure that keeps happening.
   * @default 10000
   */
  intervalMs?: number;
}

/** Logs failures by kind, once per interval. Never throws. */
export interface FailureLog {
  /**
   * Counts one failure of `operation`; writes a line when it is the first of its kind or
   * the first after the interval. `fields` go on that line.
   */
  failed(operation: string, error: unknown, message: string, fields?: Record<string, unknown>): void;
  /** The operation answers again: writes the failures counted since the last line, if any. */
  recovered(operation: string, message: string): void;
  /** Whether any failure is being counted (callers skip `recovered` on the hot path otherwise). */
  readonly failing: boolean;
}

interface Kind {
  operation: string;
  /** Failures since the last line. */
  unwritten: number;
  /** All failures of this kind since the first. */
  total: number;
  firstAt: number;
  lastLineAt: number;
  error: string;
}

/** Distinct kinds remembered at once; past it the oldest is dropped (after writing its count). */
const MAX_KINDS = 64;

/** `name: message` of an error, for summary lines. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function kindOf(operation: string, error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return `${operation}\u0000${name}\u0000${typeof code === 'string' || typeof code === 'number' ? String(code) : ''}`;
}

/**
 * Creates a failure log for one store user (a keyring, a quota spender, a flusher).
 *
 * @example
 * ```ts
 * const failures = createFailureLog({ write: (f, m) => logger.error(f, m), clock: systemClock });
 * try { await store.findByDigest(digest); if (failures.failing) failures.recovered('findByDigest', 'key store answers again'); }
 * catch (error) { failures.failed('findByDigest', error, 'key store unavailable'); }
 * ```
 */
export function createFailureLog(options: FailureLogOptions): FailureLog {
  const { write, clock, intervalMs = 10_000 } = options;
  const kinds = new Map<string, Kind>();

  const safeWrite = (fields: Record<string, unknown>, message: string): void => {
    try {
      write(fields, message);
    } catch {
      /* a logger that throws must not turn a 503 into a 500 */
    }
  };

  function summary(kind: Kind, now: number): Record<string, unknown> {
    return { operation: kind.operation, error: kind.error, failures: kind.unwritten, totalFailures: kind.total, sinceMs: now - kind.firstAt };
  }

  return Object.freeze({
    failed(operation: string, error: unknown, message: string, fields: Record<string, unknown> = {}): void {
      const now = clock();
      const id = kindOf(operation, error);
      const kind = kinds.get(id);
      if (kind === undefined) {
        if (kinds.size >= MAX_KINDS) {
          const [oldestId, oldest] = kinds.entries().next().value as [string, Kind];
          kinds.delete(oldestId);
          if (oldest.unwritten > 0) safeWrite(summary(oldest, now), 'failures of one kind, not yet written');
        }
        kinds.set(id, { operation, unwritten: 0, total: 1, firstAt: now, lastLineAt: now, error: describeError(error) });
        safeWrite({ ...fields, operation, err: error }, message);
        return;
      }
      kind.total++;
      kind.unwritten++;
      kind.error = describeError(error);
      if (now - kind.lastLineAt < intervalMs) return;
      safeWrite({ ...fields, ...summary(kind, now) }, `${message} (repeated)`);
      kind.unwritten = 0;
      kind.lastLineAt = now;
    },
    recovered(operation: string, message: string): void {
      if (kinds.size === 0) return;
      const now = clock();
      for (const [id, kind] of kinds) {
        if (kind.operation !== operation) continue;
        kinds.delete(id);
        safeWrite({ operation, error: kind.error, failures: kind.unwritten, totalFailures: kind.total, downMs: now - kind.firstAt }, message);
      }
    },
    get failing(): boolean {
      return kinds.size > 0;
    },
  });
}
