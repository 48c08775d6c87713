/**
 * The orders API on Express 5: the route table (`app/routes.ts`) mounted with
 * `@keyset/express` middleware, and request logs. It only translates between HTTP and the
 * app layer.
 * @module
 */
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/express';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { createServer, type Server } from 'node:http';
import type { AppResponse } from './app/app-types.ts';
import type { OrdersApp } from './app/create-app.ts';
import { auditedBy, ordersRoutes, type Route, type RouteMethod } from './app/routes.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted } from './logger.ts';
import type { ServerOptions } from './server-hono.ts';

/** The Express application (no socket). */
export function createExpressApp(app: OrdersApp, options: ServerOptions): express.Express {
  const { logger, publicUrl } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  const errors = new WeakMap<Request, unknown>(); // the error a request failed with, for its log line
  const server = express();
  server.disable('x-powered-by');
  // Exact paths: `/api/orders/` is not `/api/orders`, as on the Hono server.
  server.set('strict routing', true);
  server.set('case sensitive routing', true);
  server.set('query parser', false); // handlers read the raw query string

  server.use(function requestLog(req, res, next) {
    const started = performance.now();
    const log = (aborted: boolean): void => {
      const key = res.locals.apiKey;
      const line = { method: req.method, url: req.originalUrl, status: res.statusCode, durationMs: performance.now() - started };
      logRequest(logger, { ...line, key: key && { id: key.id, last4: key.last4 }, error: errors.get(req), aborted });
    };
    res.on('finish', () => log(requestAborted(req)));
    // No `finish` when the connection closed first: a client that went away mid-body (or
    // whose body Node's parser refused) is still logged, once, as aborted.
    res.on('close', () => !res.writableFinished && log(true));
    next();
  });
  // Before routing (Express would decode a `:param`, or match `/a/../b` as sent): a malformed
  // path or a dot segment is 400 on every server (core's policy, docs/adapters.md).
  server.use(checkRequest());

  // Raw bytes whatever the Content-Type, decoded as UTF-8 like Hono's `text()`: the app layer
  // checks the headers first (so body-parser never inflates or decodes a charset) and parses
  // the rest. Too large → 413, worded as on the other servers.
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES, inflate: false });
  const bodyBytes: RequestHandler = (req, res, next) => {
    assertJsonBodyHeaders(req.get('content-type'), req.get('content-encoding'));
    raw(req, res, (error?: unknown) => {
      const tooLarge = (error as { type?: unknown } | undefined)?.type === 'entity.too.large';
      next(tooLarge ? Object.assign(new Error(`The body is larger than ${MAX_BODY_BYTES} bytes`, { cause: error }), { status: 413, expose: true }) : error);
    });
  };
  const jsonBody = (req: Request) =>
    parseJsonObject(Buffer.isBuffer(req.body) ? new TextDecoder().decode(req.body) : '', req.get('content-type'), req.get('content-encoding'));
  const answer = async (route: Route, req: Request, res: Response): Promise<void> => {
    if (route.kind === 'file') {
      const { headers, file } = await route.read();
      return void res.set(headers).send(file);
    }
    if (route.kind === 'page') {
      const { rows, total } = await route.list(res.locals.page, req.params);
      return sendPage(res, rows, total === undefined ? {} : { total });
    }
    const by = auditedBy(() => res.locals.apiKey.id, req.get('x-request-id'), (id) => res.set('x-request-id', id));
    const body = route.body === true ? jsonBody(req) : {};
    reply(res, await route.handle({ params: req.params, query: new URL(req.originalUrl, 'http://localhost').searchParams, body, by }));
  };

  const routes = ordersRoutes(app);
  for (const route of routes) {
    const steps: RequestHandler[] = [];
    if (route.key !== undefined) steps.push(apiKey({ guard: app.guard, ...route.key }));
    if (route.kind === 'page') steps.push(paginate(route.paginator, pageOptions));
    if (route.kind === 'json' && route.body === true) steps.push(bodyBytes);
    server[route.method.toLowerCase() as Lowercase<RouteMethod>](route.path, ...steps, (req, res) => answer(route, req, res));
  }
  // Express lists no routes through a documented API: the table tells a known path under
  // another method (405 with Allow) from an unknown one (404).
  server.use(notFoundHandler({ routes }));
  server.use(problemHandler({ onError: (error, req) => void errors.set(req, error) }));
  return server;
}

/** A Node HTTP server (not yet listening) serving the Express application. */
export function createExpressServer(app: OrdersApp, options: ServerOptions): Server {
  return createServer(createExpressApp(app, options));
}

function reply(res: Response, response: AppResponse): void {
  res.status(response.status);
  if (response.headers) res.set(response.headers);
  if (response.body === undefined) res.end();
  else res.json(response.body);
}
