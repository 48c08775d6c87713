/**
 * The orders API on Fastify 5: the route table (`app/routes.ts`) mounted with
 * `@keyset/fastify` hooks, and request logs. It only translates between HTTP and the app layer.
 * @module
 */
import { apiKey, keyset, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/fastify';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { OrdersApp } from './app/create-app.ts';
import { auditedBy, ordersRoutes, type Route } from './app/routes.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted } from './logger.ts';
import type { ServerOptions } from './server-hono.ts';

/** The Fastify application, ready and not listening; `serverFactory` builds its Node server on the side. */
export async function createFastifyApp(app: OrdersApp, options: ServerOptions & { serverFactory?: (handler: RequestListener) => Server }): Promise<FastifyInstance> {
  const { logger, publicUrl, serverFactory } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  const errors = new WeakMap<FastifyRequest, unknown>();
  const onError = (error: unknown, request: FastifyRequest): void => void errors.set(request, error);
  const server = Fastify({
    // Exact paths, as on Hono. Any `:id` length reaches the app (404 for an unknown id, as
    // elsewhere), not Fastify's 414: no route has the regex parameters its default guards.
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 65_536 },
    frameworkErrors: problemHandler({ onError }), // a bad %-encoding in the path never reaches the error handler
    ...(serverFactory === undefined ? {} : { serverFactory: serverFactory as never }),
  });
  // The plugin's checkRequest() hook refuses, before routing answers, what servers could read
  // differently: 400 on every server (core's policy, docs/adapters.md, "Requests").
  await server.register(keyset, { onError, handlers: false });
  server.setNotFoundHandler(notFoundHandler());
  // The body limit's refusal reads as on the other servers (413, same detail).
  const problems = problemHandler({ onError });
  const tooLarge = (cause: Error) => Object.assign(new Error(`The body is larger than ${MAX_BODY_BYTES} bytes`, { cause }), { statusCode: 413 });
  server.setErrorHandler((error: Error, request, reply) => problems((error as { code?: unknown }).code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? tooLarge(error) : error, request, reply));

  const started = new WeakMap<FastifyRequest, number>();
  const log = (request: FastifyRequest, entry: { status: number; durationMs: number; aborted: boolean; error?: unknown }): void => {
    const key = request.apiKey ?? undefined;
    logRequest(logger, { method: request.method, url: request.raw.url ?? '/', key: key && { id: key.id, last4: key.last4 }, ...entry });
  };
  server.addHook('onRequest', async (request) => void started.set(request, performance.now()));
  server.addHook('onResponse', async (request, reply) =>
    log(request, { status: reply.statusCode, durationMs: reply.elapsedTime, error: errors.get(request), aborted: requestAborted(request.raw) }),
  );
  // No `onResponse` when the client closed the connection first (mid-body, or a body Node's
  // parser refused): Fastify calls this instead, and the request is logged as aborted.
  server.addHook('onRequestAbort', async (request) => log(request, { status: 0, durationMs: performance.now() - (started.get(request) ?? performance.now()), aborted: true }));

  // Only the routes that take a body read one (not 404 or 405 either), as on the other servers.
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  const answer = async (route: Route, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (route.kind === 'file') {
      const { headers, file } = await route.read();
      return reply.headers(headers).send(file);
    }
    if (route.kind === 'page') {
      const { rows, total } = await route.list(request.page, request.params as Record<string, unknown>);
      return sendPage(reply, rows, total === undefined ? {} : { total });
    }
    const by = auditedBy(() => request.apiKey.id, request.headers['x-request-id'] as string | undefined, (id) => reply.header('x-request-id', id));
    const { 'content-type': type, 'content-encoding': coding } = request.headers;
    const body = route.body === true ? parseJsonObject(Buffer.isBuffer(request.body) ? new TextDecoder().decode(request.body) : '', type, coding) : {};
    const query = new URL(request.raw.url ?? '/', 'http://localhost').searchParams;
    const { status, headers = {}, body: sent } = await route.handle({ params: request.params as Record<string, unknown>, query, body, by });
    return reply.code(status).headers(headers).send(sent);
  };
  const mount = (scope: FastifyInstance, route: Route): void => {
    const hooks: Partial<RouteOptions> = {};
    if (route.key !== undefined) hooks.onRequest = apiKey({ guard: app.guard, ...route.key }); // before Fastify reads a body
    if (route.kind === 'page') hooks.preHandler = paginate(route.paginator, pageOptions);
    // The body's headers are checked after the key, before Fastify reads it, so Fastify never
    // refuses a media type or inflates a coding itself.
    if (route.kind === 'json' && route.body === true) hooks.preParsing = async (request) => assertJsonBodyHeaders(request.headers['content-type'], request.headers['content-encoding']);
    scope.route({ ...hooks, method: route.method, url: route.path, handler: (request, reply) => answer(route, request, reply) });
  };
  const routes = ordersRoutes(app);
  for (const route of routes) if (route.kind !== 'json' || route.body !== true) mount(server, route);
  // The routes with a JSON body, in their own context for the body parser: raw bytes whatever
  // the Content-Type (at most MAX_BODY_BYTES, else 413), decoded as UTF-8 like Hono's `text()`.
  await server.register(async function jsonBodyRoutes(scope) {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
    for (const route of routes) if (route.kind === 'json' && route.body === true) mount(scope, route);
  });
  await server.ready();
  return server;
}

/** A Node HTTP server (not yet listening) serving the Fastify application. */
export async function createFastifyServer(app: OrdersApp, options: ServerOptions): Promise<Server> {
  let server: Server | undefined;
  await createFastifyApp(app, { ...options, serverFactory: (handler) => (server = createServer(handler)) });
  // Malformed HTTP (before any route runs) is answered by Node itself, as on the other
  // servers, not by Fastify's JSON `clientError` reply.
  server!.removeAllListeners('clientError');
  return server!;
}
