/**
 * The keyring's logger, made best effort. A logger that throws (a closed sink, a failing
 * serializer) must never turn a client's 401 into a 500 or crash the process from the
 * last-use timer, so every call swallows what the logger throws.
 *
 * Key store failures go through a failure log on the same instance (`storeFailed`): the
 * first of a kind is logged with its error, later ones once per interval with a count,
 * so an outage is a few lines, not one stack trace per request.
 * @module
 */
import type { Clock } from '../../clock.ts';
import { createFailureLog } from '../../internal/failure-log.ts';
import type { KeyringLogger } from '../../auth/keyring-options.ts';

type LogFields = Record<string, unknown>;

/** Never throws. */
export interface BestEffortLog {
  /** Whether a `warn` sink is set: callers skip building fields when there is none. */
  warns(): boolean;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
  /** A key store call failed (logged once per interval and kind, with a count). */
  storeFailed(operation: string, error: unknown): void;
  /** A key store call answered: ends a counted outage of `operation` with one line. */
  storeAnswered(operation: string): void;
}

/** How often an ongoing key store outage is logged again (with the count since). */
const STORE_FAILURE_INTERVAL_MS = 10_000;

/** Wraps `logger` (which may be absent or lack either level). */
export function bestEffortLog(logger: KeyringLogger | undefined, clock: Clock = Date.now): BestEffortLog {
  const write = (level: 'warn' | 'error', fields: LogFields, message: string): void => {
    try {
      logger?.[level]?.(fields, message);
    } catch {
      /* best effort */
    }
  };
  const failures = createFailureLog({ write: (fields, message) => write('error', fields, message), clock, intervalMs: STORE_FAILURE_INTERVAL_MS });
  return Object.freeze({
    warns: (): boolean => Boolean(logger?.warn),
    warn: (fields: LogFields, message: string): void => write('warn', fields, message),
    error: (fields: LogFields, message: string): void => write('error', fields, message),
    storeFailed: (operation: string, error: unknown): void => failures.failed(operation, error, 'key store unavailable'),
    storeAnswered: (operation: string): void => {
      if (failures.failing) failures.recovered(operation, 'key store answers again');
    },
  });
}
