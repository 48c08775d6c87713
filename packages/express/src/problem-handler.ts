/**
 * RFC 9457 problems (`application/problem+json`) through core's `toProblem()`: the error
 * middleware `problemHandler()` and the fallback `notFoundHandler()` (404, or 405 with
 * `Allow`). Client errors of Express and body-parser become `invalid_request`, never a 500.
 * @module
 */
import { KeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, clientErrorStatus, type KnownOptions, methodNotAllowed, requestPathError, routeMethods, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import type { RouteEntry } from '@keyset/core/adapter';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { instanceOf, refusalOf, sendProblem } from './check-request.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /**
   * Called with every error and its response status (5xx are bugs to log; a 401's `reason`
   * is for logs only). body-parser's malformed-JSON error arrives without the body text.
   * Never log `req.originalUrl` unredacted: it may hold a key.
   * @default none
   */
  onError?: (error: unknown, req: Request, status: number) => void;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/** Options of `notFoundHandler()`. */
export interface NotFoundHandlerOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /**
   * The app's routes (`{ method, path }`, Express path patterns with `:param` and `*`), so
   * that a known path under another method is 405 with `Allow`, not 404. Express documents
   * no way to list an app's routes: give the table you register them from.
   * @default none: every unmatched request is a 404
   */
  routes?: Iterable<RouteEntry>;
}

const NOT_FOUND_HANDLER_OPTIONS = { routes: true, typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

/**
 * Error middleware, registered last: the one place an Express app renders a `KeysetError`.
 * Every refusal keyset's middleware passes to `next(error)`, and any your handlers throw,
 * keep status, code, extensions and headers (`WWW-Authenticate`, `Retry-After`,
 * `RateLimit`); Express's and body-parser's client errors are `invalid_request`; anything
 * else is a bare 500.
 *
 * @example
 * ```ts
 * app.use(problemHandler({ onError: (err, req, status) => status >= 500 && console.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  const { onError, typeBase } = options;
  return function problemHandler(raw: unknown, req, res, next) {
    if (res.headersSent) return next(raw); // too late: Express closes the connection
    const error = (raw as { type?: unknown } | null)?.type === 'entity.parse.failed' ? scrubSyntaxError(raw as Error) : raw;
    const problem = problemOf(clientError(error, req), req, typeBase);
    const kept = clientErrorStatus(error);
    const status = kept === undefined || kept === 404 ? problem.status : kept;
    try {
      onError?.(error, req, status);
    } catch {
      // A failing logger must not turn a problem into Express's HTML page.
    }
    const sent = status === problem.status ? problem : { ...problem, status, body: { ...problem.body, status } };
    sendProblem(req, res, sent.status, sent.headers, sent.body);
  };
}

/**
 * Fallback middleware, registered after every route: 404 `not_found`, or 405
 * `method_not_allowed` with `Allow` (RFC 9110 §15.5.6) when `routes` has the path under
 * other methods. Refuses what `checkRequest()` refuses first.
 *
 * @example
 * ```ts
 * const routes = [{ method: 'GET', path: '/orders/:id' }];
 * app.use(notFoundHandler({ routes }));
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): RequestHandler {
  assertKnownOptions('notFoundHandler', options, NOT_FOUND_HANDLER_OPTIONS);
  const { routes, typeBase } = options;
  return function notFoundHandler(req, res) {
    const error =
      refusalOf(req) ??
      (routes && methodNotAllowed(req.method, routeMethods(routes, req.path))) ??
      new KeysetError('not_found', { detail: 'No resource matches this path.' });
    const { status, headers, body } = problemOf(error, req, typeBase);
    sendProblem(req, res, status, headers, body);
  };
}

function problemOf(error: unknown, req: Request, typeBase: string | undefined): ProblemResponse {
  const instance = instanceOf(req);
  return toProblem(error, typeBase === undefined ? { instance } : { instance, typeBase });
}

function clientError(error: unknown, req: Request): unknown {
  const status = clientErrorStatus(error);
  if (status === undefined) return error;
  if (status === 404) return new KeysetError('not_found', { cause: error });
  const { type, expose, message } = error as { type?: unknown; expose?: unknown; message?: unknown };
  // The router could not decode a `:param` (its message quotes it): core's path policy.
  const invalid = error instanceof URIError ? requestPathError(req.originalUrl) : undefined;
  if (invalid !== undefined) return new KeysetError('invalid_request', { detail: invalid.detail, extensions: invalid.extensions, cause: error });
  if (type === 'entity.parse.failed') {
    return new KeysetError('invalid_request', { detail: 'The request body is not valid JSON.', extensions: { field: 'body' }, cause: error });
  }
  const detail = expose === true && typeof message === 'string' && message !== '' ? message : 'The request could not be processed.';
  return new KeysetError('invalid_request', { detail, cause: error });
}
