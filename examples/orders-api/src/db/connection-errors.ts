/**
 * A database that cannot be reached is the server's trouble, but not a bug: clients get
 * 503 `unavailable`, not 500: the request may succeed once the database is back. SQL errors (a bad query, a constraint) stay
 * what they are, so real bugs still surface as 500 and in the log.
 */
import { KeysetError } from '@keyset/core';

// SQLSTATE classes and codes that mean "no usable connection", not "bad SQL":
// 08 connection exception, 53 insufficient resources, 57P01–57P03 shutdown / cannot
// connect now, 55000 with "not currently accepting connections", 3D000 no such database,
// 57014 query_canceled (our `statement_timeout` hit: the database is too slow right now).
const SQLSTATE = /^(08|53|57P0[1-3]|57014$|3D000)/;
const SYSTEM = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
// `Query read timeout`: node-postgres's `query_timeout`, the server said nothing in time.
const MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not currently accepting connections|Client has encountered a connection error|the database system is (starting up|shutting down)/i;

export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SQLSTATE.test(code) || SYSTEM.has(code))) return true;
  return typeof message === 'string' && MESSAGES.test(message);
}

/** The error to throw for a failed query: `unavailable` when the database is out of reach. */
export function asUnavailable(error: unknown): unknown {
  if (!isConnectionError(error)) return error;
  return new KeysetError('unavailable', {
    detail: 'The database cannot be reached right now; try again shortly.',
    headers: { 'retry-after': '1' },
    cause: error,
  });
}
