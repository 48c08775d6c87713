/**
 * Error middleware that answers with RFC 9457 problems (`application/problem+json`)
 * through the core's `toProblem()`, and a `notFound()` fallback. Client errors Express and
 * body-parser report themselves (malformed JSON, a body too large) become `invalid_request`,
 * never a 500.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import type { ProblemResponse } from '@keyset/core';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { requestPath } from './internal/request-url.ts';
import { scrubParseError } from './internal/scrub-parse-error.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /**
   * Called with every error before the problem is sent, with its response status:
   * 5xx are server bugs to log loudly; a 401's `reason` (`AuthenticationError`) is for logs
   * and metrics only. Never log `req.originalUrl` unredacted: it may hold a key. A
   * malformed-JSON error from body-parser arrives without the body text (its `body` and the
   * excerpt in its message), since a body may hold a credential.
   * @default none
   */
  onError?: (error: unknown, req: Request, status: number) => void;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

/**
 * Error middleware, registered last: keyset errors keep their status, code, extensions and
 * headers (`WWW-Authenticate`, `Retry-After`, `RateLimit`); anything else is a bare 500.
 *
 * @example
 * ```ts
 * app.use(notFound());
 * app.use(problemHandler({ onError: (err, req, status) => status >= 500 && console.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  const { onError, typeBase } = options;
  return function problemHandler(raw: unknown, req, res, next) {
    // Too late for a problem: Express's default handler closes the connection.
    if (res.headersSent) return next(raw);
    const error = scrubParseError(raw);
    const instance = requestPath(req);
    const problem = toProblem(clientError(error), typeBase === undefined ? { instance } : { instance, typeBase });
    const status = statusOf(error) ?? problem.status;
    if (onError !== undefined) {
      try {
        onError(error, req, status);
      } catch {
        // A failing logger must not turn a problem response into Express's HTML page.
      }
    }
    send(res, status === problem.status ? problem : withStatus(problem, status));
  };
}

/**
 * Fallback middleware, registered after every route: a 404 `not_found` problem.
 *
 * @example
 * ```ts
 * app.use(notFound());
 * ```
 */
export function notFound(): RequestHandler {
  return function notFound(_req, _res, next) {
    next(new KeysetError('not_found', { detail: 'No resource matches this path.' }));
  };
}

/** The 4xx status of an `http-errors`-style error (body-parser, Express's router). */
function clientStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || isKeysetError(error)) return undefined;
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 500 ? value : undefined;
}

/** A status the framework chose (413, 415…) that the problem keeps; 404 and 400 map as is. */
function statusOf(error: unknown): number | undefined {
  const status = clientStatus(error);
  return status === 404 ? undefined : status;
}

function clientError(error: unknown): unknown {
  const status = clientStatus(error);
  if (status === undefined) return error;
  if (status === 404) return new KeysetError('not_found', { cause: error });
  const { type, expose, message } = error as { type?: unknown; expose?: unknown; message?: unknown };
  if (type === 'entity.parse.failed') {
    // body-parser's message quotes the body, which may hold a credential: never echo it.
    return new KeysetError('invalid_request', {
      detail: 'The request body is not valid JSON.',
      extensions: { field: 'body' },
      cause: error,
    });
  }
  const detail = expose === true && typeof message === 'string' && message !== '' ? message : 'The request could not be processed.';
  return new KeysetError('invalid_request', { detail, cause: error });
}

function withStatus(problem: ProblemResponse, status: number): ProblemResponse {
  return { status, headers: problem.headers, body: { ...problem.body, status } };
}

function send(res: Parameters<RequestHandler>[1], problem: ProblemResponse): void {
  res.status(problem.status).set(problem.headers).send(JSON.stringify(problem.body));
}
