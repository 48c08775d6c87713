/**
 * Error and not-found handlers that answer with RFC 9457 problems (`application/problem+json`)
 * through the core's `toProblem()`. Client mistakes Hono reports itself (an `HTTPException`
 * below 500, malformed JSON from `c.req.json()`) become `invalid_request`, never a 500.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import type { Context, ErrorHandler, Hono, NotFoundHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { instanceOf, refusalOf } from './check-request.ts';

/** Options of `problemHandler()` and `notFoundHandler()`. */
export interface ProblemHandlerOptions {
  /**
   * Called with every error before the problem is sent, with its response status:
   * 5xx are server bugs to log loudly; a 401's `reason` (`AuthenticationError`) is for logs
   * and metrics only. Never log `c.req.url` unredacted: it may hold a key. A malformed
   * JSON body's `SyntaxError` arrives without the body excerpt V8 puts in its message,
   * since a body may hold a credential.
   * @default none
   */
  onError?: (error: unknown, c: Context, status: number) => void;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

/** Every name `ProblemHandlerOptions` knows, checked when the handler is made. */
const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/**
 * `app.onError()` handler: keyset errors keep their status, code, extensions and headers
 * (`WWW-Authenticate`, `Retry-After`, `RateLimit`); anything else is a bare 500 problem.
 *
 * @example
 * ```ts
 * app.onError(problemHandler({ onError: (err, c, status) => status >= 500 && console.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ErrorHandler {
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  const { onError, typeBase } = options;
  return async function problemHandler(error, c) {
    const { problem, reported } = await clientProblem(error, c, typeBase);
    if (onError !== undefined) {
      try {
        onError(reported, c, problem.status);
      } catch {
        // A failing logger must not turn a problem response into a crash.
      }
    }
    return send(c, problem);
  };
}

/** Options of `notFoundHandler()`. */
export interface NotFoundHandlerOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /**
   * The app whose routes tell a wrong method (405 `method_not_allowed` with `Allow`) from an
   * unknown path (404). Hono hands a not-found handler no route table, so pass the app.
   * @default none: every unmatched request is a 404
   */
  app?: Pick<Hono<any, any, any>, 'routes' | 'router'>;
}

/** Every name `NotFoundHandlerOptions` knows, checked when the handler is made. */
const NOT_FOUND_HANDLER_OPTIONS = { app: true, typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

/**
 * `app.notFound()` handler: a 404 `not_found` problem, or, when the path exists under
 * other methods, a 405 `method_not_allowed` problem with `Allow` (RFC 9110 §15.5.6).
 *
 * @example
 * ```ts
 * app.notFound(notFoundHandler({ app }));
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): NotFoundHandler {
  assertKnownOptions('notFoundHandler', options, NOT_FOUND_HANDLER_OPTIONS);
  const { typeBase, app } = options;
  return function notFoundHandler(c) {
    const error =
      // What checkRequest() refuses is refused here too, before routing answers (core's policy).
      refusalOf(c) ??
      (app && methodNotAllowed(c.req.method, allowedMethods(app, c.req.path))) ??
      new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(c, problemOf(error, c, typeBase));
  };
}

/** The methods the app has a route for at `path` (not middleware: `use()` registers `ALL`). */
function allowedMethods(app: NonNullable<NotFoundHandlerOptions['app']>, path: string): string[] {
  const candidates = new Set(app.routes.map((route) => route.method).filter((method) => method !== 'ALL'));
  return [...candidates].filter((method) => app.router.match(method, path)[0].some(([[, route]]) => route.method === method));
}

function problemOf(error: unknown, c: Context, typeBase: string | undefined): ProblemResponse {
  const instance = instanceOf(c);
  return toProblem(error, typeBase === undefined ? { instance } : { instance, typeBase });
}

/** The problem to send, and the error to report (the client's body scrubbed from it). */
async function clientProblem(error: unknown, c: Context, typeBase: string | undefined): Promise<{ problem: ProblemResponse; reported: unknown }> {
  if (isKeysetError(error)) return { problem: problemOf(error, c, typeBase), reported: error };
  if (isHttpException(error) && error.status >= 400 && error.status < 500) {
    if (error.status === 404) return { problem: problemOf(new KeysetError('not_found', { cause: error }), c, typeBase), reported: error };
    // Hono's message is the body it would have sent, so it is meant for the client.
    const detail = error.message === '' ? 'The request could not be processed.' : error.message;
    const problem = problemOf(new KeysetError('invalid_request', { detail, cause: error }), c, typeBase);
    // Keep the status the framework chose (413, 415…) and headers such as `Allow`.
    const headers: Record<string, string> = {};
    for (const [name, value] of error.getResponse().headers) if (!name.startsWith('content-')) headers[name] = value;
    return { problem: { status: error.status, headers: { ...headers, ...problem.headers }, body: { ...problem.body, status: error.status } }, reported: error };
  }
  if (error instanceof SyntaxError && (await isMalformedJsonBody(c))) {
    const reported = scrubSyntaxError(error);
    const invalid = new KeysetError('invalid_request', {
      detail: 'The request body is not valid JSON.',
      extensions: { field: 'body' },
      cause: reported,
    });
    return { problem: problemOf(invalid, c, typeBase), reported };
  }
  return { problem: problemOf(error, c, typeBase), reported: error };
}

/** Hono's `HTTPException`, recognised by shape so that two installed copies agree. */
function isHttpException(error: unknown): error is Error & { status: number; getResponse(): Response } {
  return (
    error instanceof Error &&
    typeof (error as { getResponse?: unknown }).getResponse === 'function' &&
    typeof (error as { status?: unknown }).status === 'number'
  );
}

/**
 * A `SyntaxError` is the client's fault only if the body it sent does not parse: the
 * handler read the body (`bodyUsed`), and `c.req.text()` (cached by `c.req.json()`) fails
 * to parse, or cannot be read again because the handler parsed the raw request itself.
 */
async function isMalformedJsonBody(c: Context): Promise<boolean> {
  if (!c.req.raw.bodyUsed) return false;
  try {
    JSON.parse(await c.req.text());
    return false;
  } catch {
    return true;
  }
}

function send(c: Context, problem: ProblemResponse): Response {
  return c.body(JSON.stringify(problem.body), problem.status as ContentfulStatusCode, problem.headers);
}
