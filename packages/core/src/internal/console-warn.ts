/**
 * The default `logger` of the parts that warn about a failing store (rate limiter,
 * refused-credentials budget, in-flight limit, revocation bus), and the one-line text of
 * the error they warn about.
 * @module
 */

/** A `warn(details, message)` logger writing to `console.warn`, tagged `[keyset]`. */
export const consoleWarnLogger = {
  warn: (details: Record<string, unknown>, message: string): void => console.warn(`[keyset] ${message}`, details),
};

/** An error as one line, `name: message` (no stack), for a log line's details. */
export function errorLine(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
