/**
 * Structured JSON logs (pino). Credentials never reach a line: request URLs go through
 * core `redactUrl` (credential query parameters and anything shaped like a key become
 * `…abcd`), only a key's id and last 4 characters are logged, and pino's `redact`
 * censors `authorization` and `cookie` headers should anything log a raw request. Last,
 * every serialised line goes through core `redactText`, so key-shaped text in any field
 * (an error message, a header, a URL built elsewhere) never reaches the output.
 * @module
 */
import { isKeysetError, redactText, redactUrl, AuthenticationError } from '@keyset/core';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger } from 'pino';

/** Creates the process logger. `destination` is for tests (default stdout). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'orders-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-api-key"]',
        'headers.authorization',
        'headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: '[REDACTED]',
    },
    // The net under everything above: JSON never escapes letters, digits or `_`, so a key
    // anywhere in the line is still key-shaped here.
    hooks: { streamWrite: redactText },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** One finished request, as the server builders report it. */
export interface RequestLogEntry {
  method: string;
  /** Path and query as received; redacted here before logging. */
  url: string;
  status: number;
  durationMs: number;
  /** The authenticated key, when there was one. */
  key?: { id: string; last4: string } | undefined;
  /** The error a handler or the guard threw, when there was one. */
  error?: unknown;
}

/**
 * Writes the access-log line of one request: `info` below 500, `error` with the
 * error for 5xx. For refused keys it adds the precise reason (revoked, expired,
 * checksum…) that the client never sees (DESIGN §5).
 */
export function logRequest(logger: Logger, entry: RequestLogEntry): void {
  const line: Record<string, unknown> = {
    req: { method: entry.method, url: redactUrl(entry.url) },
    res: { statusCode: entry.status },
    responseTime: Math.round(entry.durationMs * 100) / 100,
  };
  if (entry.key) line.key = { id: entry.key.id, last4: entry.key.last4 };
  const error = entry.error;
  if (error instanceof AuthenticationError) {
    line.auth = { reason: error.reason, ...(error.last4 === undefined ? {} : { last4: error.last4 }) };
  } else if (isKeysetError(error)) {
    line.problem = error.code;
  }
  if (entry.status >= 500) {
    if (error !== undefined && !isKeysetError(error)) line.err = error;
    else if (isKeysetError(error) && error.cause !== undefined) line.err = error.cause;
    logger.error(line, 'request failed');
  } else {
    logger.info(line, 'request');
  }
}
