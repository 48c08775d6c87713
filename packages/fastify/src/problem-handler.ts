/**
 * Error and not-found handlers that answer with RFC 9457 problems (`application/problem+json`)
 * through the core's `toProblem()`. Client mistakes Fastify reports itself (malformed or
 * empty JSON bodies, unsupported media types, oversized bodies, schema validation, bad
 * URL encoding) become `invalid_request` with Fastify's status, never a 500.
 * @module
 */
import { KeysetError, isKeysetError, methodNotAllowed, toProblem } from '@keyset/core';
import type { ProblemResponse } from '@keyset/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { requestPath } from './internal/request-url.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /**
   * Called with every error before the problem is sent, with its response status:
   * 5xx are server bugs to log loudly; a 401's `reason` (`AuthenticationError`) is for logs
   * and metrics only. Never log `request.url` unredacted: it may hold a key.
   * @default none
   */
  onError?: (error: unknown, request: FastifyRequest, status: number) => void;
  /**
   * Prefix of the problem `type` URI; the code is appended.
   * @default 'urn:keyset:problem:'
   */
  typeBase?: string;
}

/** Options of `notFoundHandler()`. */
export type NotFoundHandlerOptions = Pick<ProblemHandlerOptions, 'typeBase'>;

/** Fastify's error handler shape (`setErrorHandler`, and the factory's `frameworkErrors`). */
export type ProblemErrorHandler = (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/** Fastify's not-found handler shape (`setNotFoundHandler`). */
export type ProblemNotFoundHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * `app.setErrorHandler()` handler: keyset errors keep their status, code, extensions and
 * headers (`WWW-Authenticate`, `Retry-After`, `RateLimit`); Fastify's own client errors
 * keep their 4xx status as `invalid_request`; anything else is a bare 500 problem. Also
 * pass it as the factory's `frameworkErrors`, so a bad URL encoding is a problem too.
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: problemHandler() });
 * app.setErrorHandler(problemHandler({ onError: (err, request, status) => status >= 500 && request.log.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ProblemErrorHandler {
  const { onError, typeBase } = options;
  return function problemHandler(error, request, reply) {
    const { problem, status } = clientProblem(error, request, typeBase);
    if (onError !== undefined) {
      try {
        onError(error, request, status);
      } catch {
        // A failing logger must not turn a problem response into Fastify's default 500.
      }
    }
    return send(reply, problem);
  };
}

/**
 * `app.setNotFoundHandler()` handler: a 404 `not_found` problem, or, when the path has
 * routes under other methods, a 405 `method_not_allowed` problem with `Allow` (RFC 9110
 * §15.5.6).
 *
 * @example
 * ```ts
 * app.setNotFoundHandler(notFoundHandler());
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): ProblemNotFoundHandler {
  const { typeBase } = options;
  return function notFoundHandler(request, reply) {
    const path = requestPath(request);
    // Every method this app serves (Fastify's defaults, QUERY, and any `addHttpMethod()`
    // ones such as PROPFIND), not a fixed list: a path served only under a method outside
    // it would otherwise be a 404, or an `Allow` would leave that method out.
    const allowed = request.server.supportedMethods.filter((method) => request.server.findRoute({ method, url: path }) !== null);
    const error = methodNotAllowed(request.method, allowed) ?? new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(reply, problemOf(error, request, typeBase));
  };
}

/** Fastify's client errors whose message is not for the client, with what to say instead. */
const DETAILS: Record<string, string> = {
  FST_ERR_BAD_URL: 'The request path is not valid URL encoding.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is not valid JSON.',
  FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON.',
};

function problemOf(error: unknown, request: FastifyRequest, typeBase: string | undefined): ProblemResponse {
  const instance = requestPath(request);
  return toProblem(error, typeBase === undefined ? { instance } : { instance, typeBase });
}

function clientProblem(error: unknown, request: FastifyRequest, typeBase: string | undefined): { problem: ProblemResponse; status: number } {
  const status = clientStatus(error);
  if (status === undefined) {
    const problem = problemOf(error, request, typeBase);
    return { problem, status: problem.status };
  }
  if (status === 404) {
    const problem = problemOf(new KeysetError('not_found', { cause: error }), request, typeBase);
    return { problem, status: 404 };
  }
  const { code, message } = error as { code?: unknown; message?: unknown };
  const known = typeof code === 'string' ? DETAILS[code] : undefined;
  const detail = known ?? (typeof message === 'string' && message !== '' ? message : 'The request could not be processed.');
  const field = typeof code === 'string' && code.startsWith('FST_ERR_CTP_') && known !== undefined ? { extensions: { field: 'body' } } : {};
  const problem = problemOf(new KeysetError('invalid_request', { detail, cause: error, ...field }), request, typeBase);
  // Keep the status Fastify chose (413, 415…).
  return { problem: { status, headers: problem.headers, body: { ...problem.body, status } }, status };
}

/** A client status (4xx) that Fastify or a plugin put on a non-keyset error. */
function clientStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || isKeysetError(error)) return undefined;
  const { statusCode, status } = error as { statusCode?: unknown; status?: unknown };
  const value = typeof statusCode === 'number' ? statusCode : status;
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 500 ? value : undefined;
}

function send(reply: FastifyReply, problem: ProblemResponse): FastifyReply {
  return reply.code(problem.status).headers(problem.headers).send(JSON.stringify(problem.body));
}
