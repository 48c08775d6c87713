/**
 * The keyring's logger, made best effort. A logger that throws (a closed sink, a failing
 * serializer) must never turn a client's 401 into a 500 or crash the process from the
 * last-use timer, so every call swallows what the logger throws.
 * @module
 */
import type { KeyringLogger } from '../keyring-options.ts';

type LogFields = Record<string, unknown>;

/** Never throws. */
export interface BestEffortLog {
  /** Whether a `warn` sink is set: callers skip building fields when there is none. */
  warns(): boolean;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

/** Wraps `logger` (which may be absent or lack either level). */
export function bestEffortLog(logger: KeyringLogger | undefined): BestEffortLog {
  const write = (level: 'warn' | 'error', fields: LogFields, message: string): void => {
    try {
      logger?.[level]?.(fields, message);
    } catch {
      /* best effort */
    }
  };
  return Object.freeze({
    warns: (): boolean => Boolean(logger?.warn),
    warn: (fields: LogFields, message: string): void => write('warn', fields, message),
    error: (fields: LogFields, message: string): void => write('error', fields, message),
  });
}
