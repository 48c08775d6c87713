/**
 * The orders API on Fastify 5: routes, `@keyset/fastify` hooks, request logs. It only
 * translates between HTTP and the app layer (`src/app`).
 * @module
 */
import { apiKey, keyset, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/fastify';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AppResponse } from './app/app-types.ts';
import { DOCS_HTML, DOCS_PATHS, scalarBundle } from './app/api-docs.ts';
import { adminContext } from './app/audit.ts';
import { CONSOLE_FILES, readConsoleFile } from './app/console.ts';
import type { OrdersApp } from './app/create-app.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted } from './logger.ts';
import type { ServerOptions } from './server-hono.ts';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type NameRequest = FastifyRequest<{ Params: { name: string } }>;

/**
 * The Fastify application, ready (routes registered, plugins loaded) and not listening.
 * `serverFactory` lets it build its Node server on the side; `createFastifyServer` returns it.
 */
export async function createFastifyApp(app: OrdersApp, options: ServerOptions & { serverFactory?: (handler: RequestListener) => Server }): Promise<FastifyInstance> {
  const { logger, publicUrl, serverFactory } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  const errors = new WeakMap<FastifyRequest, unknown>();
  const onError = (error: unknown, request: FastifyRequest): void => void errors.set(request, error);
  const server = Fastify({
    // Exact paths, as on the Hono server: `/api/orders/` is not `/api/orders`. Any `:id`
    // length reaches the app (a 404 for an unknown id, as elsewhere), not Fastify's 414:
    // the routes have no regex parameters, which is what its 100-character default guards.
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 65_536 },
    // A bad %-encoding in the path never reaches the error handler: this does.
    frameworkErrors: problemHandler({ onError }),
    ...(serverFactory === undefined ? {} : { serverFactory: serverFactory as never }),
  });
  await server.register(keyset, { onError, handlers: false });
  server.setNotFoundHandler(notFoundHandler());
  const problems = problemHandler({ onError });
  // The body limit's refusal reads as on the other servers (413, same detail).
  server.setErrorHandler((error: Error, request, reply) =>
    problems((error as { code?: unknown }).code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? tooLarge(error) : error, request, reply),
  );

  server.addHook('onResponse', async function requestLog(request, reply) {
    const key = request.apiKey ?? undefined;
    logRequest(logger, {
      method: request.method,
      url: request.raw.url ?? '/',
      status: reply.statusCode,
      durationMs: reply.elapsedTime,
      key: key && { id: key.id, last4: key.last4 },
      error: errors.get(request),
      aborted: requestAborted(request.raw),
    });
  });
  // The keyset plugin's checkRequest() hook refuses, before routing answers, what servers
  // could read differently: 400 on every server (core's policy, docs/adapters.md, "Requests").
  const started = new WeakMap<FastifyRequest, number>();
  server.addHook('onRequest', async function requestStart(request) {
    started.set(request, performance.now());
  });
  // No `onResponse` when the client closed the connection first (mid-body, or a body Node's
  // parser refused): Fastify calls this instead, and the request is logged as aborted.
  server.addHook('onRequestAbort', async function abortedRequestLog(request) {
    const key = request.apiKey ?? undefined;
    logRequest(logger, {
      method: request.method,
      url: request.raw.url ?? '/',
      status: 0,
      durationMs: performance.now() - (started.get(request) ?? performance.now()),
      key: key && { id: key.id, last4: key.last4 },
      aborted: true,
    });
  });

  // Bodies are read by the routes that take one (below) and by no other, the 404 and 405
  // answers included: as on the other servers, a body elsewhere is never read or refused.
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  const utf8 = new TextDecoder();
  const checkBodyHeaders = async (request: FastifyRequest): Promise<void> => {
    assertJsonBodyHeaders(request.headers['content-type'], request.headers['content-encoding']);
  };
  const jsonBody = (request: FastifyRequest) =>
    parseJsonObject(Buffer.isBuffer(request.body) ? utf8.decode(request.body) : '', request.headers['content-type'], request.headers['content-encoding']);
  const query = (request: FastifyRequest) => new URL(request.raw.url ?? '/', 'http://localhost').searchParams;

  const { guard, scopes, costs } = app;
  // onRequest: the key is checked before Fastify reads a body.
  const orders = { onRequest: apiKey({ guard, scopes: scopes.orders, cost: costs.orders, route: 'GET /api/orders' }) };
  const reports = { onRequest: apiKey({ guard, scopes: scopes.reports, cost: costs.reports, route: 'GET /api/reports/daily' }) };
  const admin = { onRequest: apiKey({ guard, scopes: scopes.keys }) };
  const adminBody = { ...admin, preParsing: checkBodyHeaders };

  // Who an admin change is made by, for the audit log: the admin key and the request id,
  // which the response carries back (the one the client sent, or the one made here).
  const who = (request: FastifyRequest, reply: FastifyReply) => {
    const context = adminContext(request.apiKey.id, request.headers['x-request-id'] as string | undefined);
    reply.header('x-request-id', context.requestId);
    return context;
  };

  server.get('/healthz', async () => app.health());
  server.get(DOCS_PATHS.document, async () => app.openapi);
  server.get(DOCS_PATHS.page, (_request, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML));
  server.get(DOCS_PATHS.script, (_request, reply) =>
    reply.headers({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' }).send(scalarBundle()),
  );

  for (const file of CONSOLE_FILES) {
    server.get(file.path, async (_request, reply) => {
      const { body, headers } = await readConsoleFile(file);
      return reply.headers(headers).send(body);
    });
  }

  server.get('/api/orders', { ...orders, preHandler: paginate(app.paginators.orders, pageOptions) }, async (request, reply) => {
    const { rows, total } = await app.orders.list(request.page);
    return sendPage(reply, rows, total === undefined ? {} : { total });
  });

  server.get('/api/reports/daily', reports, async (request, reply) => send(reply, await app.reports.daily({ query: query(request) })));

  server.get('/api/keys', { ...admin, preHandler: paginate(app.paginators.keys, pageOptions) }, async (request, reply) => {
    const { rows, total } = await app.keys.list(request.page);
    return sendPage(reply, rows, total === undefined ? {} : { total });
  });
  server.get('/api/keys/:id', admin, async (request: IdRequest, reply) => send(reply, await app.keys.get(request.params.id)));
  server.delete('/api/keys/:id', admin, async (request: IdRequest, reply) => send(reply, await app.keys.revoke(request.params.id, who(request, reply))));
  server.get('/api/owners', { ...admin, preHandler: paginate(app.paginators.owners, pageOptions) }, async (request, reply) => {
    const { rows, total } = await app.owners.list(request.page);
    return sendPage(reply, rows, total === undefined ? {} : { total });
  });
  server.get('/api/owners/:id', admin, async (request: IdRequest, reply) => send(reply, await app.owners.get(request.params.id)));
  server.delete('/api/owners/:id', admin, async (request: IdRequest, reply) => send(reply, await app.owners.remove(request.params.id, who(request, reply))));
  // Usage (docs/usage.md): requests per outcome and credits, per key, per owner, top keys.
  server.get('/api/keys/:id/usage', admin, async (request: IdRequest, reply) => send(reply, await app.usage.key(request.params.id, query(request))));
  server.get('/api/owners/:id/usage', admin, async (request: IdRequest, reply) => send(reply, await app.usage.owner(request.params.id, query(request))));
  server.get('/api/usage/top', admin, async (request, reply) => send(reply, await app.usage.top(query(request))));
  server.get('/api/owners/:id/keys', { ...admin, preHandler: paginate(app.paginators.ownerKeys, pageOptions) }, async (request: IdRequest, reply) => {
    const { rows, total } = await app.owners.listKeys(request.params.id, request.page);
    return sendPage(reply, rows, total === undefined ? {} : { total });
  });

  server.get('/api/roles', admin, async (_request, reply) => send(reply, await app.roles.list()));
  server.get('/api/roles/:name', admin, async (request: NameRequest, reply) => send(reply, await app.roles.get(request.params.name)));
  server.delete('/api/roles/:name', admin, async (request: NameRequest, reply) => send(reply, await app.roles.remove(request.params.name, who(request, reply))));
  server.get('/api/keys/:id/roles', admin, async (request: IdRequest, reply) => send(reply, await app.roles.keyRoles(request.params.id)));
  server.get('/api/owners/:id/roles', admin, async (request: IdRequest, reply) => send(reply, await app.roles.ownerRoles(request.params.id)));

  server.get('/api/audit', { ...admin, preHandler: paginate(app.paginators.audit, pageOptions) }, async (request, reply) => {
    const { rows, total } = await app.audit.list(request.page);
    return sendPage(reply, rows, total === undefined ? {} : { total });
  });

  // The routes with a JSON body, in their own context for the body parser: raw bytes
  // whatever the Content-Type, decoded as UTF-8 like Hono's `text()`. The app layer checks
  // the headers first (`preParsing`, after the key), so Fastify never refuses a media type
  // or inflates a coding itself, and parses the rest. Too large → 413.
  await server.register(async function jsonBodyRoutes(scope) {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => done(null, body));
    scope.post('/api/keys', adminBody, async (request, reply) => send(reply, await app.keys.issue(jsonBody(request), who(request, reply))));
    scope.post('/api/keys/:id/rotate', adminBody, async (request: IdRequest, reply) => send(reply, await app.keys.rotate(request.params.id, jsonBody(request), who(request, reply))));
    scope.patch('/api/keys/:id', adminBody, async (request: IdRequest, reply) => send(reply, await app.keys.update(request.params.id, jsonBody(request), who(request, reply))));
    scope.patch('/api/keys/:id/limits', adminBody, async (request: IdRequest, reply) =>
      send(reply, await app.keys.updateLimits(request.params.id, jsonBody(request), who(request, reply))),
    );
    scope.post('/api/owners', adminBody, async (request, reply) => send(reply, await app.owners.create(jsonBody(request), who(request, reply))));
    scope.post('/api/roles', adminBody, async (request, reply) => send(reply, await app.roles.create(jsonBody(request), who(request, reply))));
    scope.patch('/api/roles/:name', adminBody, async (request: NameRequest, reply) => send(reply, await app.roles.update(request.params.name, jsonBody(request), who(request, reply))));
    scope.put('/api/keys/:id/roles', adminBody, async (request: IdRequest, reply) => send(reply, await app.roles.setKeyRoles(request.params.id, jsonBody(request), who(request, reply))));
    scope.put('/api/owners/:id/roles', adminBody, async (request: IdRequest, reply) => send(reply, await app.roles.setOwnerRoles(request.params.id, jsonBody(request), who(request, reply))));
    scope.patch('/api/owners/:id', adminBody, async (request: IdRequest, reply) => send(reply, await app.owners.update(request.params.id, jsonBody(request), who(request, reply))));
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

function tooLarge(cause: unknown): Error {
  return Object.assign(new Error(`The body is larger than ${MAX_BODY_BYTES} bytes`, { cause }), { statusCode: 413 });
}

function send(reply: FastifyReply, response: AppResponse): FastifyReply {
  reply.code(response.status);
  if (response.headers) reply.headers(response.headers);
  return response.body === undefined ? reply.send() : reply.send(response.body);
}
