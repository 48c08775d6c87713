/**
 * RFC 9457 problem responses (`application/problem+json`) through the core's
 * `toProblem()`: `problemHandler()` wraps a handler and answers whatever it throws,
 * `notFoundHandler()` is the 404 fallback of a router, `problemResponse()` converts one
 * error where the platform hands you the error (Bun's `error`, Deno's `onError`).
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import { rememberedHeaders } from './api-key.ts';
import type { AsyncFetchHandler, FetchHandler } from './api-key.ts';
import { instanceOf, refusalOf } from './check-request.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /**
   * Called with every error before the problem is sent, with its response status:
   * 5xx are server bugs to log loudly; a 401's `reason` (`AuthenticationError`) is for logs
   * and metrics only. Never log `request.url` unredacted: it may hold a key. A malformed
   * JSON body's `SyntaxError` arrives without the body excerpt V8 puts in its message,
   * since a body may hold a credential.
   * @default none
   */
  onError?: (error: unknown, request: Request, status: number) => void;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

/** Every name `ProblemHandlerOptions` knows, checked when the handler is made. */
const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/** Options of `problemResponse()`. */
export interface ProblemResponseOptions {
  /**
   * The request that failed: its path becomes the problem's `instance`, and the
   * `RateLimit` headers `apiKey()` recorded for it go on the response.
   * @default none (no `instance`)
   */
  request?: Request;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

/** Every name `ProblemResponseOptions` knows, checked on every call. */
const PROBLEM_RESPONSE_OPTIONS = { request: true, typeBase: true } as const satisfies KnownOptions<ProblemResponseOptions>;

/**
 * Wraps `handler` so that whatever it throws is answered as a problem: keyset errors keep
 * their status, code, extensions and headers (`WWW-Authenticate`, `Retry-After`,
 * `RateLimit`); a `SyntaxError` from reading a malformed JSON body is 400
 * `invalid_request` with `field: 'body'`; anything else is a bare 500. The outermost
 * wrapper of a route (Next.js) or of a Worker's `fetch`.
 *
 * @example
 * ```ts
 * export const GET = problemHandler({ onError: (err, request, status) => status >= 500 && console.error(err) }, handler);
 * ```
 */
export function problemHandler<Rest extends unknown[] = []>(handler: FetchHandler<Rest>): AsyncFetchHandler<Rest>;
export function problemHandler<Rest extends unknown[] = []>(options: ProblemHandlerOptions, handler: FetchHandler<Rest>): AsyncFetchHandler<Rest>;
export function problemHandler<Rest extends unknown[]>(
  first: ProblemHandlerOptions | FetchHandler<Rest>,
  second?: FetchHandler<Rest>,
): AsyncFetchHandler<Rest> {
  const [options, handler] = typeof first === 'function' ? [{}, first] : [first, second];
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  if (typeof handler !== 'function') throw new TypeError('problemHandler(options, handler) needs the handler to wrap');
  const { onError, typeBase } = options ?? {};
  return async function problemHandler(request, ...rest) {
    try {
      return await handler(request, ...rest);
    } catch (error) {
      const { problem, reported } = clientProblem(error, request, typeBase, instanceOf(request, rest[0]));
      if (onError !== undefined) {
        try {
          onError(reported, request, problem.status);
        } catch {
          // A failing logger must not turn a problem response into a crash.
        }
      }
      return send(problem, rememberedHeaders(request));
    }
  };
}

/** Options of `notFoundHandler()`. */
export interface NotFoundHandlerOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /**
   * The methods your router serves at `pathname`, so that a known path under another
   * method is 405 `method_not_allowed` with `Allow` (RFC 9110 §15.5.6), not 404.
   * (Next.js answers 405 for methods a `route.ts` does not export by itself.)
   * @default none: every unmatched request is a 404
   */
  allowedMethods?: (pathname: string) => Iterable<string>;
}

/** Every name `NotFoundHandlerOptions` knows, checked when the handler is made. */
const NOT_FOUND_HANDLER_OPTIONS = { allowedMethods: true, typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

/**
 * A router's fallback: a 404 `not_found` problem, or a 405 `method_not_allowed` problem
 * with `Allow` when `allowedMethods` knows the path under other methods.
 *
 * @example
 * ```ts
 * const routes: Record<string, Record<string, (request: Request) => Promise<Response>>> = { '/api/orders': { GET: listOrders } };
 * const notFound = notFoundHandler({ allowedMethods: (pathname) => Object.keys(routes[pathname] ?? {}) });
 * export default {
 *   fetch: problemHandler((request) => routes[new URL(request.url).pathname]?.[request.method]?.(request) ?? notFound(request)),
 * };
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): (request: Request) => Response {
  assertKnownOptions('notFoundHandler', options, NOT_FOUND_HANDLER_OPTIONS);
  const { typeBase, allowedMethods } = options;
  if (allowedMethods !== undefined && typeof allowedMethods !== 'function') {
    throw new TypeError('notFoundHandler() allowedMethods must be a function of the path');
  }
  return function notFoundHandler(request) {
    const error =
      // What checkRequest() refuses is refused here too, before routing answers (core's policy).
      refusalOf(request) ??
      (allowedMethods && methodNotAllowed(request.method, allowedMethods(new URL(request.url).pathname))) ??
      new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(problemOf(error, request, typeBase), {});
  };
}

/**
 * One error as a problem `Response`, for platforms that hand you the error themselves.
 * It reports nothing: log in your own error hook.
 *
 * @example
 * ```ts
 * Bun.serve({ fetch: handler, error: (error) => problemResponse(error) });
 * ```
 */
export function problemResponse(error: unknown, options: ProblemResponseOptions = {}): Response {
  assertKnownOptions('problemResponse', options, PROBLEM_RESPONSE_OPTIONS);
  const { request, typeBase } = options;
  return send(clientProblem(error, request, typeBase).problem, rememberedHeaders(request));
}

function problemOf(error: unknown, request: Request | undefined, typeBase: string | undefined, sentPath?: string): ProblemResponse {
  const instance = sentPath ?? (request === undefined ? undefined : instanceOf(request));
  return toProblem(error, { ...(instance !== undefined && { instance }), ...(typeBase !== undefined && { typeBase }) });
}

/** The problem to send, and the error to report (the client's body scrubbed from it). */
function clientProblem(
  error: unknown,
  request: Request | undefined,
  typeBase: string | undefined,
  sentPath?: string,
): { problem: ProblemResponse; reported: unknown } {
  if (isKeysetError(error)) return { problem: problemOf(error, request, typeBase, sentPath), reported: error };
  if (error instanceof SyntaxError && request !== undefined && readBody(request)) {
    const reported = scrubSyntaxError(error);
    const invalid = new KeysetError('invalid_request', {
      detail: 'The request body is not valid JSON.',
      extensions: { field: 'body' },
      cause: reported,
    });
    return { problem: problemOf(invalid, request, typeBase), reported };
  }
  return { problem: problemOf(error, request, typeBase), reported: error };
}

/**
 * Whether a `SyntaxError` comes from the client's JSON body: the handler read the body
 * (`bodyUsed`), or the client declared JSON and sent none (Bun gives an empty body no
 * stream, so reading it leaves `bodyUsed` false).
 */
function readBody(request: Request): boolean {
  if (request.bodyUsed) return true;
  return request.body === null && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(request.headers.get('content-type') ?? '');
}

function send(problem: ProblemResponse, extra: Readonly<Record<string, string>>): Response {
  const headers = new Headers(extra);
  for (const [name, value] of Object.entries(problem.headers)) headers.set(name, value);
  return new Response(JSON.stringify(problem.body), { status: problem.status, headers });
}
