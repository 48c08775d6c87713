/**
 * Structured JSON logs (pino). Credentials never reach a line, by construction: request
 * URLs go through core `redactUrlForLog` (credential query parameters and keys become
 * `…abcd`, and no path segment, query name or value keeps 8 letters and digits in a row,
 * so a mangled key that no recogniser sees is cut up too: `…/key_7Hq…eWcN?cursor=eyJ…oxfQ`),
 * only a key's id and last 4 characters are logged, and pino's `redact` censors
 * `authorization` and `cookie` headers should anything log a raw request. Last, every
 * serialised line goes through core `redactText`, so key-shaped text, whole or mangled,
 * in any field (an error message, a header, a URL built elsewhere) never reaches the
 * output.
 * @module
 */
import { isKeysetError, redactText, redactUrlForLog, AuthenticationError } from '@keyset/core';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger } from 'pino';

/**
 * Creates the process logger. `destination` is for tests (default: stdout, written
 * synchronously).
 *
 * Why synchronous: pino's default stdout stream is asynchronous and flushes itself with a
 * synchronous loop when the process exits. With stdout piped to a reader that has gone
 * (`… start | tee log`, and Ctrl-C reached `tee` too) that loop retries the EPIPE write
 * forever, so the process never exited and no second Ctrl-C could interrupt it (JavaScript
 * never ran again). A synchronous stream writes each line before the call returns, has no
 * exit-time flush, and on EPIPE pino stops writing to it; the server then runs and shuts
 * down without logs. The cost is a blocking write per line: nothing on a terminal, a file
 * or a log collector that keeps up, a pause when the reader of a pipe does not.
 */
export function createLogger(level: LogLevel, destination: DestinationStream = pino.destination({ dest: 1, sync: true })): Logger {
  const options = {
    level,
    base: { service: 'orders-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // An error's cause as a nested object, not appended to its message: the messages this
    // app writes already name their cause once ("cannot connect to DATABASE_URL (…):
    // connect ECONNREFUSED …"), and pino's default serializer would repeat it.
    serializers: { err: pino.stdSerializers.errWithCause },
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
  return pino(options, destination);
}

/** What `requestAborted` reads from a Node `IncomingMessage` (structural, so any server fits). */
export interface IncomingRequestState {
  /** The whole message, body included, was received. */
  readonly complete?: boolean;
  /** The stream was destroyed before it ended (Node ≥ 16.14). */
  readonly readableAborted?: boolean;
  readonly destroyed?: boolean;
}

/**
 * Whether the request body never arrived whole because the client went away: it closed
 * the connection mid-body, or sent a body Node's HTTP parser refused (a malformed chunk),
 * after which Node itself answers 400 and closes the socket.
 *
 * @example
 * ```ts
 * requestAborted(c.env.incoming); // Hono on @hono/node-server
 * ```
 */
export function requestAborted(request: IncomingRequestState | undefined): boolean {
  if (request === undefined || request.complete === true) return false;
  return request.readableAborted === true || request.destroyed === true;
}

/**
 * Whether `error` is a body read that failed because the client went away, not a fault
 * of ours: Node's `Error('aborted')` (`ECONNRESET`, what `@hono/node-server` and a Web
 * `Request` over an `IncomingMessage` reject with), raw-body's `request.aborted`
 * (Express), a premature stream close.
 *
 * @example
 * ```ts
 * isClientAbort(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })); // true
 * ```
 */
export function isClientAbort(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { message, code, type } = error as { message?: unknown; code?: unknown; type?: unknown };
  if (type === 'request.aborted' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNABORTED') return true;
  return message === 'aborted' && code === 'ECONNRESET';
}

/** One finished request, as the server builders report it. */
export interface RequestLogEntry {
  method: string;
  /** Path and query as received; `redactUrlForLog` here before logging. */
  url: string;
  status: number;
  durationMs: number;
  /** The authenticated key, when there was one. */
  key?: { id: string; last4: string } | undefined;
  /** The error a handler or the guard threw, when there was one. */
  error?: unknown;
  /**
   * The client went away before the request body arrived whole (`requestAborted`). An
   * `error` that `isClientAbort` recognises counts as this too.
   */
  aborted?: boolean;
}

/**
 * Writes the access-log line of one request: `info` below 500, `error` with the
 * error for 5xx. For refused keys it adds the precise reason (revoked, expired,
 * checksum…) that the client never sees (it would help an attacker probe keys). A request the client abandoned
 * mid-body is `info` "request aborted" with `aborted: true` and no status: no response
 * of ours reached anyone, and it is no server fault (whatever status a framework set
 * for the failed body read).
 */
export function logRequest(logger: Logger, entry: RequestLogEntry): void {
  const req = { method: entry.method, url: redactUrlForLog(entry.url) };
  const responseTime = Math.round(entry.durationMs * 100) / 100;
  const key = entry.key && { id: entry.key.id, last4: entry.key.last4 };
  if (entry.aborted === true || isClientAbort(entry.error)) {
    logger.info({ req, responseTime, ...(key ? { key } : {}), aborted: true }, 'request aborted');
    return;
  }
  const line: Record<string, unknown> = { req, res: { statusCode: entry.status }, responseTime };
  if (key) line.key = key;
  const error = entry.error;
  if (error instanceof AuthenticationError) {
    line.auth = { reason: error.reason, ...(error.last4 === undefined ? {} : { last4: error.last4 }) };
  } else if (isKeysetError(error)) {
    line.problem = error.code;
  }
  if (entry.status >= 500) {
    // A bug (anything but a keyset error) keeps its stack: it is rare and needs it. A
    // keyset 5xx (`unavailable`: a store or the database is down) gets its cause as one
    // line of text: during an outage every request fails the same way, and core's
    // failure log already wrote the first failure with its stack, then a count per
    // interval. One stack per refused request was thousands of lines a second.
    if (error !== undefined && !isKeysetError(error)) line.err = error;
    else if (isKeysetError(error) && error.cause !== undefined) line.cause = causeText(error.cause);
    logger.error(line, 'request failed');
  } else {
    logger.info(line, 'request');
  }
}

/**
 * An error as `name: message` (and its own cause's, after `←`, two levels at most), without
 * its stack: what a 503 line needs to say which store failed and how.
 *
 * @example
 * ```ts
 * causeText(new KeysetError('unavailable', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }));
 * // 'KeysetError: The key store is unavailable. ← Error: connect ECONNREFUSED'
 * ```
 */
export function causeText(cause: unknown, depth = 0): string {
  if (!(cause instanceof Error)) return String(cause).slice(0, 500);
  const text = `${cause.name}: ${cause.message}`.slice(0, 500);
  return depth < 2 && cause.cause !== undefined ? `${text} ← ${causeText(cause.cause, depth + 1)}` : text;
}
