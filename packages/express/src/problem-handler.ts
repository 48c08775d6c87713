/**
 * Error middleware that answers with RFC 9457 problems (`application/problem+json`)
 * through the core's `toProblem()`, and a `notFoundHandler()` fallback (404, or 405 with `Allow`). Client errors Express and
 * body-parser report themselves (malformed JSON, a body too large) become `invalid_request`,
 * never a 500.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed, requestPathError, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { instanceOf, refusalOf } from './check-request.ts';

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

/** Every name `ProblemHandlerOptions` knows, checked when the handler is made. */
const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/**
 * Error middleware, registered last: keyset errors keep their status, code, extensions and
 * headers (`WWW-Authenticate`, `Retry-After`, `RateLimit`); anything else is a bare 500.
 *
 * @example
 * ```ts
 * app.use(notFoundHandler());
 * app.use(problemHandler({ onError: (err, req, status) => status >= 500 && console.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  const { onError, typeBase } = options;
  return function problemHandler(raw: unknown, req, res, next) {
    // Too late for a problem: Express's default handler closes the connection.
    if (res.headersSent) return next(raw);
    // body-parser's malformed-JSON error quotes the body (it may hold a credential): scrubbed for logs.
    const error = (raw as { type?: unknown } | null)?.type === 'entity.parse.failed' ? scrubSyntaxError(raw as Error) : raw;
    const instance = instanceOf(req);
    const problem = toProblem(clientError(error, instance), typeBase === undefined ? { instance } : { instance, typeBase });
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
 * Fallback middleware, registered after every route: a 404 `not_found` problem, or, when
 * the path exists under other methods, a 405 `method_not_allowed` problem with `Allow`
 * (RFC 9110 §15.5.6). The methods come from the app's router (`req.app.router`), routers
 * mounted with `app.use(path, router)` included.
 *
 * @example
 * ```ts
 * app.use(notFoundHandler());
 * ```
 */
export function notFoundHandler(): RequestHandler {
  return function notFoundHandler(req, _res, next) {
    // What checkRequest() refuses is refused here too, before routing answers (core's policy).
    const invalid = refusalOf(req);
    if (invalid !== undefined) return next(invalid);
    const router = (req.app as { router?: unknown }).router;
    const allowed = isRouter(router) ? routeMethods(router.stack, req.path) : [];
    next(methodNotAllowed(req.method, allowed) ?? new KeysetError('not_found', { detail: 'No resource matches this path.' }));
  };
}

/** What this module reads of Express 5's router (the `router` package): its layers. */
interface RouterLike {
  stack: readonly LayerLike[];
}
interface LayerLike {
  /** Older `router` versions set the matched prefix here; 2.3+ return it from `match()`. */
  path?: string;
  match(path: string): boolean | { path?: unknown };
  route?: { methods: Record<string, boolean | undefined> };
  handle?: unknown;
}

function isRouter(value: unknown): value is RouterLike {
  return (typeof value === 'function' || typeof value === 'object') && value !== null && Array.isArray((value as RouterLike).stack);
}

/** Methods of the routes matching `path`, descending into mounted routers. */
function routeMethods(stack: readonly LayerLike[], path: string): string[] {
  const methods: string[] = [];
  for (const layer of stack) {
    const match = typeof layer.match === 'function' ? layer.match(path) : false;
    if (match === false) continue;
    if (layer.route !== undefined) {
      // `_all` is `route.all()`: that route would have matched, so it adds nothing here.
      for (const [method, on] of Object.entries(layer.route.methods)) if (on === true && method !== '_all') methods.push(method);
    } else if (isRouter(layer.handle)) {
      const prefix = typeof match === 'object' && typeof match.path === 'string' ? match.path : layer.path;
      if (typeof prefix === 'string') methods.push(...routeMethods(layer.handle.stack, path.slice(prefix.length) || '/'));
    }
  }
  return methods;
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

function clientError(error: unknown, path: string): unknown {
  const status = clientStatus(error);
  if (status === undefined) return error;
  if (status === 404) return new KeysetError('not_found', { cause: error });
  // The router could not decode a `:param` (its message quotes it): core's path policy.
  const invalid = error instanceof URIError ? requestPathError(path) : undefined;
  if (invalid !== undefined) return new KeysetError('invalid_request', { detail: invalid.detail, extensions: invalid.extensions, cause: error });
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
