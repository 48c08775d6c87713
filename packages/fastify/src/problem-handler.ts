/**
 * RFC 9457 problems through core's `toProblem()`: error and not-found handlers, and the
 * `keyset` plugin. Fastify's client errors become `invalid_request` in our words, never a 500.
 * @module
 */
import { KeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, clientErrorStatus, type KnownOptions, methodNotAllowed, nodeBodyPending, schemaValidationError } from '@keyset/core/adapter';
import type { PagePlan, ProblemResponse, VerifiedKey } from '@keyset/core';
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { checkRequest, instanceOf, refusalOf } from './check-request.ts';

/** Options of `problemHandler()`. */
export interface ProblemHandlerOptions {
  /** Called with every error and its response status (5xx are bugs to log; a 401's `reason` is for logs only). Never log `request.url` unredacted: it may hold a key. @default none */
  onError?: (error: unknown, request: FastifyRequest, status: number) => void;
  /** Prefix of the problem `type` URI; the code is appended. @default 'urn:keyset:problem:' */
  typeBase?: string;
}

const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/** Options of `notFoundHandler()`. */
export type NotFoundHandlerOptions = Pick<ProblemHandlerOptions, 'typeBase'>;

/** Fastify's error handler shape (`setErrorHandler`, and the factory's `frameworkErrors`). */
export type ProblemErrorHandler = (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/** Fastify's not-found handler shape (`setNotFoundHandler`). */
export type ProblemNotFoundHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * `app.setErrorHandler()` (and `frameworkErrors`) handler: keyset errors keep status, code,
 * members and headers; Fastify's 4xx are `invalid_request` with their status; else a 500.
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: problemHandler() });
 * app.setErrorHandler(problemHandler({ onError: (err, request, status) => status >= 500 && request.log.error(err) }));
 * ```
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ProblemErrorHandler {
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
  const { onError, typeBase } = options;
  return function problemHandler(error, request, reply) {
    const problem = clientProblem(error, request, typeBase);
    try {
      onError?.(error, request, problem.status);
    } catch {
      // A failing logger must not turn a problem into Fastify's default 500.
    }
    return send(reply, problem);
  };
}

/**
 * `app.setNotFoundHandler()` handler: 404, or 405 with `Allow` (RFC 9110 §15.5.6) when
 * `findRoute()` knows the path under other methods. Refuses what `checkRequest()` refuses.
 *
 * @example
 * ```ts
 * app.setNotFoundHandler(notFoundHandler());
 * ```
 */
export function notFoundHandler(options: NotFoundHandlerOptions = {}): ProblemNotFoundHandler {
  assertKnownOptions('notFoundHandler', options, { typeBase: true });
  const { typeBase } = options;
  return function notFoundHandler(request, reply) {
    const url = new URL(request.url, 'http://localhost').pathname;
    const allowed = (): string[] => request.server.supportedMethods.filter((method) => request.server.findRoute({ method, url }) !== null);
    const error = refusalOf(request) ?? methodNotAllowed(request.method, allowed()) ?? new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(reply, problemOf(error, request, typeBase));
  };
}

/** Fastify's client errors in our words (its own quote the path or a parameter) and the `field`. */
const FASTIFY_ERRORS: Readonly<Record<string, readonly [detail: string, field: string]>> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: ['The request body is not valid JSON.', 'body'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['The request body is not valid JSON.', 'body'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['The request body is larger than this route accepts.', 'body'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['The request body does not have the length its Content-Length says.', 'body'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ["This route does not accept the request body's media type.", 'content-type'],
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: ['This request needs a Content-Type header.', 'content-type'],
  FST_ERR_ROUTE_MISSING_CONTENT: ['This request needs a body.', 'body'],
  FST_ERR_MAX_PARAM_LENGTH: ['A path parameter is longer than this route accepts.', 'path'],
  FST_ERR_BAD_URL: ['The request path is not valid percent-encoded UTF-8.', 'path'],
  FST_ERR_INVALID_URL: ['The request target is not a valid URL.', 'path'],
};

function problemOf(error: unknown, request: FastifyRequest, typeBase: string | undefined): ProblemResponse {
  const instance = instanceOf(request);
  return toProblem(error, typeBase === undefined ? { instance } : { instance, typeBase });
}

function clientProblem(error: unknown, request: FastifyRequest, typeBase: string | undefined): ProblemResponse {
  const status = clientErrorStatus(error);
  if (status === undefined) return problemOf(error, request, typeBase);
  if (status === 404) return problemOf(new KeysetError('not_found', { cause: error }), request, typeBase);
  const problem = problemOf(clientError(error, request), request, typeBase);
  return { status, headers: problem.headers, body: { ...problem.body, status } }; // Fastify's status (413, 415…)
}

/** A client error as a keyset error: a bad path by core's rule, a known `FST_` code in our words, a schema failure naming the rule (never the value); an app's own 4xx keeps its message. */
function clientError(error: unknown, request: FastifyRequest): KeysetError {
  const { code, message, validation, validationContext } = error as { code?: unknown; message?: unknown; validation?: unknown; validationContext?: unknown };
  const fastify = typeof code === 'string' && code.startsWith('FST_');
  const invalid = code === 'FST_ERR_BAD_URL' || code === 'FST_ERR_INVALID_URL' ? refusalOf(request) : undefined;
  if (invalid !== undefined) return new KeysetError('invalid_request', { detail: invalid.detail, extensions: invalid.extensions, cause: error });
  const known = fastify ? FASTIFY_ERRORS[code] : undefined;
  if (known !== undefined) return new KeysetError('invalid_request', { detail: known[0], extensions: { field: known[1] }, cause: error });
  if (Array.isArray(validation)) return schemaValidationError(validation[0], validationContext, error);
  const detail = fastify || typeof message !== 'string' || message === '' ? 'The request could not be processed.' : message;
  return new KeysetError('invalid_request', { detail, cause: error });
}

/** Sends a problem; with `Connection: close` when the request's body is still on its way unread (see `nodeBodyPending()`). */
function send(reply: FastifyReply, problem: ProblemResponse): FastifyReply {
  reply.code(problem.status).headers(problem.headers);
  if (nodeBodyPending(reply.request.raw)) reply.header('connection', 'close');
  // Bytes, not a string, for which Fastify would add `; charset=utf-8`: the media type
  // defines no charset parameter (RFC 8259 §11), and every adapter sends the same header.
  return reply.send(Buffer.from(JSON.stringify(problem.body)));
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
    apiKey: VerifiedKey;
    /** This request's page plan, set by `paginate()`: pass it to your source. */
    page: PagePlan;
  }
}

/** Options of the `keyset` plugin. */
export interface KeysetPluginOptions extends ProblemHandlerOptions {
  /** Install `problemHandler()` and `notFoundHandler()` (off: install your own). @default true */
  handlers?: boolean;
  /** Add `checkRequest()` as an app-wide `onRequest` hook (core's request rules). @default true */
  checkRequests?: boolean;
}

// Every name `KeysetPluginOptions` knows, and what Fastify's `register()` adds.
const PLUGIN_OPTIONS = { handlers: true, checkRequests: true, onError: true, typeBase: true, prefix: true, logLevel: true, logSerializers: true } as const;

const plugin: FastifyPluginCallback<KeysetPluginOptions> = (app, options, done) => {
  assertKnownOptions('keyset', options, PLUGIN_OPTIONS as KnownOptions<KeysetPluginOptions>);
  const { handlers = true, checkRequests = true, onError, typeBase } = options;
  // Fastify 5 wants reference-typed request decorations to start as null.
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('page', null as never);
  if (checkRequests) app.addHook('onRequest', checkRequest());
  if (handlers) {
    app.setErrorHandler(problemHandler({ ...(onError !== undefined && { onError }), ...(typeBase !== undefined && { typeBase }) }));
    app.setNotFoundHandler(notFoundHandler(typeBase === undefined ? {} : { typeBase }));
  }
  done();
};

/**
 * Registers keyset on a Fastify 5 app (no encapsulation): `request.apiKey`, `request.page`,
 * the request checks, and the problem handlers: `problemHandler()` as the error handler,
 * the one place a Fastify app renders a `KeysetError` (every hook of keyset's throws its
 * refusal to it).
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: problemHandler() });
 * await app.register(keyset, { onError: (err, request, status) => status >= 500 && request.log.error(err) });
 * app.get('/orders', { onRequest: apiKey({ guard, scopes: ['orders:read'] }), preHandler: paginate(orders) }, async (request, reply) =>
 *   sendPage(reply, await listOrders(request.page)),
 * );
 * ```
 */
export const keyset: FastifyPluginCallback<KeysetPluginOptions> = fp(plugin, { fastify: '5.x', name: '@keyset/fastify' });
