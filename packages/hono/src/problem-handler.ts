/**
 * RFC 9457 problems through core's `toProblem()`: `app.onError()` and `app.notFound()`
 * handlers. Hono's client errors (`HTTPException` 4xx, malformed JSON) are `invalid_request`.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed, routeMethods, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import type { Context, ErrorHandler, Hono, NotFoundHandler } from 'hono';
import { inspectRoutes } from 'hono/dev';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { instanceOf, problemHeaders, refusalOf } from './check-request.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /** Called with every error (body excerpts scrubbed) and its status; never log `c.req.url` unredacted (it may hold a key). @default none */
  onError?: (error: unknown, c: Context, status: number) => void;
  /** Prefix of the problem `type` URI; the code is appended. @default 'urn:keyset:problem:' */
  typeBase?: string;
}

const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/**
 * `app.onError()` handler, the one place a Hono app renders a `KeysetError`: every refusal
 * keyset's middleware throws, and any thrown by your handlers, keep status, code, members
 * and headers; Hono's own client errors are `invalid_request`; anything else is a bare 500.
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
    try {
      onError?.(reported, c, problem.status);
    } catch {
      // A failing logger must not turn a problem response into a crash.
    }
    return send(c, problem);
  };
}

/** Options of `notFoundHandler()`. */
export interface NotFoundHandlerOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /** The app, whose routes (Hono's `inspectRoutes`, sub-apps included) tell a wrong method (405 with `Allow`) from an unknown path (404). @default none: every unmatched request is a 404 */
  app?: Hono<any, any, any>;
}

const NOT_FOUND_HANDLER_OPTIONS = { app: true, typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

/**
 * `app.notFound()` handler: 404, or 405 with `Allow` (RFC 9110 §15.5.6) when the app has
 * the path under other methods. Refuses what `checkRequest()` refuses first.
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
      refusalOf(c) ??
      (app && methodNotAllowed(c.req.method, routeMethods(inspectRoutes(app), c.req.path))) ??
      new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(c, problemOf(error, c, typeBase));
  };
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
    // Hono's message is the body it would have sent: meant for the client.
    const problem = problemOf(new KeysetError('invalid_request', { detail: error.message || 'The request could not be processed.', cause: error }), c, typeBase);
    // Keep the status Hono chose (413, 415…) and headers such as `Allow`.
    const headers: Record<string, string> = {};
    for (const [name, value] of error.getResponse().headers) if (!name.startsWith('content-')) headers[name] = value;
    return { problem: { status: error.status, headers: { ...headers, ...problem.headers }, body: { ...problem.body, status: error.status } }, reported: error };
  }
  if (error instanceof SyntaxError && (await isMalformedJsonBody(c))) {
    const reported = scrubSyntaxError(error);
    const invalid = new KeysetError('invalid_request', { detail: 'The request body is not valid JSON.', extensions: { field: 'body' }, cause: reported });
    return { problem: problemOf(invalid, c, typeBase), reported };
  }
  return { problem: problemOf(error, c, typeBase), reported: error };
}

/** Hono's `HTTPException`, recognised by shape so that two installed copies agree. */
function isHttpException(error: unknown): error is Error & { status: number; getResponse(): Response } {
  return error instanceof Error && typeof (error as { getResponse?: unknown }).getResponse === 'function' && typeof (error as { status?: unknown }).status === 'number';
}

/** The client's fault only if the body it sent, once read, does not parse (`c.req.text()` is cached by `c.req.json()`). */
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
  return c.body(JSON.stringify(problem.body), problem.status as ContentfulStatusCode, problemHeaders(c, problem.headers));
}
