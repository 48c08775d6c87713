/**
 * Error and not-found handlers that answer with RFC 9457 problems (`application/problem+json`)
 * through the core's `toProblem()`. Client mistakes Fastify reports itself (malformed or
 * empty JSON bodies, unsupported media types, oversized bodies, schema validation, bad
 * URL encoding) become `invalid_request` with Fastify's status and our own wording (its
 * messages quote what the client sent), never a 500.
 * @module
 */
import { KeysetError, isKeysetError, toProblem } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, methodNotAllowed } from '@keyset/core/adapter';
import type { PagePlan, ProblemResponse, VerifiedKey } from '@keyset/core';
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LEASE, releaseLease } from './api-key.ts';
import { checkRequest, instanceOf, refusalOf } from './check-request.ts';
import { sendPage } from './paginate.ts';
import type { SendPageOptions } from './paginate.ts';

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

/** Every name `ProblemHandlerOptions` knows, checked when the handler is made. */
const PROBLEM_HANDLER_OPTIONS = { onError: true, typeBase: true } as const satisfies KnownOptions<ProblemHandlerOptions>;

/** Options of `notFoundHandler()`. */
export type NotFoundHandlerOptions = Pick<ProblemHandlerOptions, 'typeBase'>;

/** Every name `NotFoundHandlerOptions` knows, checked when the handler is made. */
const NOT_FOUND_HANDLER_OPTIONS = { typeBase: true } as const satisfies KnownOptions<NotFoundHandlerOptions>;

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
  assertKnownOptions('problemHandler', options, PROBLEM_HANDLER_OPTIONS);
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
  assertKnownOptions('notFoundHandler', options, NOT_FOUND_HANDLER_OPTIONS);
  const { typeBase } = options;
  return function notFoundHandler(request, reply) {
    // What checkRequest() refuses is refused here too, before routing answers (core's policy).
    const invalid = refusalOf(request);
    if (invalid !== undefined) return send(reply, problemOf(invalid, request, typeBase));
    const path = new URL(request.url, 'http://localhost').pathname;
    // Every method this app serves (Fastify's defaults, QUERY, and any `addHttpMethod()`
    // ones such as PROPFIND), not a fixed list: a path served only under a method outside
    // it would otherwise be a 404, or an `Allow` would leave that method out.
    const allowed = request.server.supportedMethods.filter((method) => request.server.findRoute({ method, url: path }) !== null);
    const error = methodNotAllowed(request.method, allowed) ?? new KeysetError('not_found', { detail: 'No resource matches this path.' });
    return send(reply, problemOf(error, request, typeBase));
  };
}

/**
 * Fastify's client errors, in our words: its messages quote the client (`'%s' is not a
 * valid url component` holds the path, a 414 the parameter), so they are never the detail.
 * `field` names what was wrong, as on the other adapters.
 */
const FASTIFY_ERRORS: Readonly<Record<string, { detail: string; field?: string }>> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: { detail: 'The request body is not valid JSON.', field: 'body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { detail: 'The request body is not valid JSON.', field: 'body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { detail: 'The request body is larger than this route accepts.', field: 'body' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { detail: 'The request body does not have the length its Content-Length says.', field: 'body' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { detail: "This route does not accept the request body's media type.", field: 'content-type' },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { detail: 'This request needs a Content-Type header.', field: 'content-type' },
  FST_ERR_ROUTE_MISSING_CONTENT: { detail: 'This request needs a body.', field: 'body' },
  FST_ERR_MAX_PARAM_LENGTH: { detail: 'A path parameter is longer than this route accepts.', field: 'path' },
  FST_ERR_BAD_URL: { detail: 'The request path is not valid percent-encoded UTF-8.', field: 'path' },
  FST_ERR_INVALID_URL: { detail: 'The request target is not a valid URL.', field: 'path' },
};

/** Where schema validation failed: `request.body`'s context names as the problem's `field`. */
const VALIDATION_FIELDS: Readonly<Record<string, string>> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

function problemOf(error: unknown, request: FastifyRequest, typeBase: string | undefined): ProblemResponse {
  const instance = instanceOf(request);
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
  const problem = problemOf(clientError(error, request), request, typeBase);
  // Keep the status Fastify chose (413, 415…).
  return { problem: { status, headers: problem.headers, body: { ...problem.body, status } }, status };
}

/**
 * A Fastify client error as a keyset error: a bad path by core's policy; a known `FST_`
 * code in our words; a schema validation failure naming the schema rule (never the value);
 * any other `FST_` code in general words. A 4xx of the app's or a plugin's own keeps its
 * message: that one is written for the client.
 */
function clientError(error: unknown, request: FastifyRequest): KeysetError {
  const { code, message, validation, validationContext } = error as { code?: unknown; message?: unknown; validation?: unknown; validationContext?: unknown };
  const fastify = typeof code === 'string' && code.startsWith('FST_');
  if (code === 'FST_ERR_BAD_URL' || code === 'FST_ERR_INVALID_URL') {
    // Fastify's router refused the target: in core's words, as the other adapters answer it.
    const invalid = refusalOf(request);
    if (invalid !== undefined) return new KeysetError('invalid_request', { detail: invalid.detail, extensions: invalid.extensions, cause: error });
  }
  const known = fastify ? FASTIFY_ERRORS[code] : undefined;
  if (known !== undefined) {
    return new KeysetError('invalid_request', { detail: known.detail, cause: error, ...(known.field !== undefined && { extensions: { field: known.field } }) });
  }
  if (Array.isArray(validation)) return schemaError(validation[0], validationContext, error);
  if (fastify || typeof message !== 'string' || message === '') {
    return new KeysetError('invalid_request', { detail: 'The request could not be processed.', cause: error });
  }
  return new KeysetError('invalid_request', { detail: message, cause: error });
}

/** Ajv's first failure: where (`body.name`) and the rule, from the schema's words. */
function schemaError(first: unknown, context: unknown, cause: unknown): KeysetError {
  const place = (typeof context === 'string' && VALIDATION_FIELDS[context]) || 'request';
  const { keyword, instancePath, params, message } = (first ?? {}) as { keyword?: unknown; instancePath?: unknown; params?: unknown; message?: unknown };
  const pointer = typeof instancePath === 'string' ? instancePath.split('/').filter((part) => part !== '') : [];
  const missing = keyword === 'required' ? (params as { missingProperty?: unknown } | undefined)?.missingProperty : undefined;
  if (typeof missing === 'string') pointer.push(missing);
  const field = [place, ...pointer].join('.');
  const rule = typeof missing === 'string' ? 'is required' : typeof message === 'string' ? message : 'is not valid';
  return new KeysetError('invalid_request', { detail: `\`${field}\` ${rule}.`, extensions: { field }, cause });
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

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
    apiKey: VerifiedKey;
    /** This request's page plan, set by `paginate()`: pass it to your source. */
    page: PagePlan;
  }
  interface FastifyReply {
    /** Sends `rows` (fetched with `request.page`) as the page, with its `Link` header. */
    sendPage<Row>(rows: readonly Row[], options?: SendPageOptions): Promise<FastifyReply>;
  }
}

/** Options of the `keyset` plugin. */
export interface KeysetPluginOptions extends ProblemHandlerOptions {
  /**
   * Install `problemHandler()` and `notFoundHandler()` on the app. Turn off to install
   * your own (call `problemHandler()` from it for keyset's errors).
   * @default true
   */
  handlers?: boolean;
  /**
   * Add `checkRequest()` as an `onRequest` hook of the app, so that every route refuses
   * what core's request policy refuses (docs/adapters.md, "Requests").
   * @default true
   */
  checkRequests?: boolean;
}

/** Every name `KeysetPluginOptions` knows, and what Fastify's `register()` adds to a plugin's options. */
const PLUGIN_OPTIONS = { handlers: true, checkRequests: true, onError: true, typeBase: true, prefix: true, logLevel: true, logSerializers: true } as const;

const plugin: FastifyPluginCallback<KeysetPluginOptions> = (app, options, done) => {
  assertKnownOptions('keyset', options, PLUGIN_OPTIONS as KnownOptions<KeysetPluginOptions>);
  const { handlers = true, checkRequests = true, onError, typeBase } = options;
  // Fastify 5 wants reference-typed request decorations to start as null; the types say
  // what a route behind apiKey()/paginate() reads (as Hono's c.var does).
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('page', null as never);
  app.decorateReply('sendPage', function sendPageDecoration<Row>(this: FastifyReply, rows: readonly Row[], sendOptions?: SendPageOptions) {
    return sendPage(this, rows, sendOptions);
  });
  // The in-flight lease apiKey() took ends with the response (sent, or a handler's error
  // answered) or when the client goes away first (onRequestAbort).
  app.decorateRequest(LEASE, null);
  app.addHook('onResponse', (request, _reply, next) => (releaseLease(request), next()));
  app.addHook('onRequestAbort', (request, next) => (releaseLease(request), next()));
  if (checkRequests) app.addHook('onRequest', checkRequest());
  if (handlers) {
    app.setErrorHandler(problemHandler({ ...(onError !== undefined && { onError }), ...(typeBase !== undefined && { typeBase }) }));
    app.setNotFoundHandler(notFoundHandler(typeBase === undefined ? {} : { typeBase }));
  }
  done();
};

/**
 * Registers keyset on a Fastify 5 app: `request.apiKey`, `request.page`, `reply.sendPage()`,
 * the request checks and the problem handlers (`fastify-plugin`: no encapsulation).
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: problemHandler() });
 * await app.register(keyset, { onError: (err, request, status) => status >= 500 && request.log.error(err) });
 * app.get('/orders', { onRequest: apiKey({ guard, scopes: ['orders:read'] }), preHandler: paginate(orders) }, async (request, reply) =>
 *   reply.sendPage(await listOrders(request.page)),
 * );
 * ```
 */
export const keyset: FastifyPluginCallback<KeysetPluginOptions> = fp(plugin, { fastify: '5.x', name: '@keyset/fastify' });
