/**
 * RFC 9457 problems through core's `toProblem()`: `problemHandler()` answers what a handler
 * throws, `notFoundHandler()` is a router's fallback, `problemResponse()` converts one error.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed, scrubSyntaxError } from '@keyset/core/adapter';
import type { ProblemResponse } from '@keyset/core';
import { rememberedHeaders } from './api-key.ts';
import type { FetchMiddleware } from './check-request.ts';
import { instanceOf, problemHeaders, refusalOf } from './check-request.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /** Called with every error (body excerpts scrubbed) and its status; never log `request.url` unredacted (it may hold a key). @default none */
  onError?: (error: unknown, request: Request, status: number) => void;
  /** Prefix of the problem `type` URI; the code is appended. @default 'urn:keyset:problem:' */
  typeBase?: string;
}

const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/** Options of `problemResponse()`. */
export interface ProblemResponseOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /** The request that failed: its path is the `instance`, its `RateLimit` headers are sent. @default none (no `instance`) */
  request?: Request;
  /**
   * What the platform passed after the request (on `@hono/node-server`, its `HttpBindings`):
   * with it the problem says `Connection: close` when the request's body has not all arrived
   * or was left part-read, as `problemHandler()`'s do. @default none
   */
  platform?: unknown;
}

const PROBLEM_RESPONSE_OPTIONS = { request: true, typeBase: true, platform: true } as const satisfies KnownOptions<ProblemResponseOptions>;

/**
 * The outermost wrapper, the one place a Fetch app renders a `KeysetError`: every refusal
 * keyset's wrappers throw (`apiKey()`, `checkRequest()`, `paginate()`), and whatever the
 * handler throws, becomes a problem. keyset errors keep status, code, members and headers
 * (with the `RateLimit` headers of an admitted request); a malformed JSON body is 400
 * `field: 'body'`; anything else a bare 500.
 *
 * @example
 * ```ts
 * export const GET = problemHandler({ onError: (err, request, status) => status >= 500 && console.error(err) })(handler);
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): FetchMiddleware {
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  const { onError, typeBase } = options;
  return function problemHandlerMiddleware(handler) {
    if (typeof handler !== 'function') throw new TypeError('problemHandler(options) wraps a handler: problemHandler(options)(handler)');
    return async function problemHandler(request, ...rest) {
      try {
        return await handler(request, ...rest);
      } catch (error) {
        const { problem, reported } = clientProblem(error, request, typeBase, instanceOf(request, rest[0]));
        try {
          onError?.(reported, request, problem.status);
        } catch {
          // A failing logger must not turn a problem response into a crash.
        }
        return send(problem, rememberedHeaders(request), request, rest[0]);
      }
    };
  };
}

/** Options of `notFoundHandler()`. */
export interface NotFoundHandlerOptions extends Pick<ProblemHandlerOptions, 'typeBase'> {
  /** The methods your router serves at `pathname`, for a 405 with `Allow` (RFC 9110 §15.5.6), not 404. @default none: every unmatched request is a 404 */
  allowedMethods?: (pathname: string) => Iterable<string>;
}

const NOT_FOUND_HANDLER_OPTIONS = { allowedMethods: true, typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

/**
 * A router's fallback: 404, or 405 with `Allow` when `allowedMethods` knows the path.
 *
 * @example
 * ```ts
 * const notFound = notFoundHandler({ allowedMethods: (pathname) => Object.keys(routes[pathname] ?? {}) });
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): (request: Request) => Response {
  assertKnownOptions('notFoundHandler', options, NOT_FOUND_HANDLER_OPTIONS);
  const { typeBase, allowedMethods } = options;
  if (allowedMethods !== undefined && typeof allowedMethods !== 'function') throw new TypeError('notFoundHandler() allowedMethods must be a function of the path');
  return function notFoundHandler(request) {
    const error =
      refusalOf(request) ?? // what checkRequest() refuses first
      (allowedMethods && methodNotAllowed(request.method, allowedMethods(new URL(request.url).pathname))) ??
      new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(problemOf(error, request, typeBase), {}, request, undefined);
  };
}

/**
 * One error as a problem `Response` (Bun's `error`, Deno's `onError`); it reports nothing.
 *
 * @example
 * ```ts
 * Bun.serve({ fetch: handler, error: (error) => problemResponse(error) });
 * ```
 */
export function problemResponse(error: unknown, options: ProblemResponseOptions = {}): Response {
  assertKnownOptions('problemResponse', options, PROBLEM_RESPONSE_OPTIONS);
  const { request, typeBase, platform } = options;
  return send(clientProblem(error, request, typeBase).problem, rememberedHeaders(request), request, platform);
}

function problemOf(error: unknown, request: Request | undefined, typeBase: string | undefined, sentPath?: string): ProblemResponse {
  const instance = sentPath ?? (request === undefined ? undefined : instanceOf(request));
  return toProblem(error, { ...(instance !== undefined && { instance }), ...(typeBase !== undefined && { typeBase }) });
}

/** The problem to send, and the error to report (the client's body scrubbed from it). */
function clientProblem(error: unknown, request: Request | undefined, typeBase: string | undefined, sentPath?: string): { problem: ProblemResponse; reported: unknown } {
  if (isKeysetError(error)) return { problem: problemOf(error, request, typeBase, sentPath), reported: error };
  if (error instanceof SyntaxError && request !== undefined && readBody(request)) {
    const reported = scrubSyntaxError(error);
    const invalid = new KeysetError('invalid_request', { detail: 'The request body is not valid JSON.', extensions: { field: 'body' }, cause: reported });
    return { problem: problemOf(invalid, request, typeBase), reported };
  }
  return { problem: problemOf(error, request, typeBase), reported: error };
}

/** A `SyntaxError` is the client's if the body was read, or JSON was declared and none sent (Bun: no stream, `bodyUsed` stays false). */
function readBody(request: Request): boolean {
  if (request.bodyUsed) return true;
  return request.body === null && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(request.headers.get('content-type') ?? '');
}

function send(problem: ProblemResponse, extra: Readonly<Record<string, string>>, request: Request | undefined, platform: unknown): Response {
  const headers = new Headers(extra);
  for (const [name, value] of Object.entries(problemHeaders(request, platform, problem.headers))) headers.set(name, value);
  return new Response(JSON.stringify(problem.body), { status: problem.status, headers });
}
