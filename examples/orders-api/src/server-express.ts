/**
 * The orders API on Express 5: routes, `@keyset/express` middleware, request logs. It
 * only translates between HTTP and the app layer (`src/app`).
 * @module
 */
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/express';
import express, { type Request, type Response } from 'express';
import { createServer, type Server } from 'node:http';
import type { AppResponse } from './app/app-types.ts';
import { DOCS_HTML, DOCS_PATHS, scalarBundle } from './app/api-docs.ts';
import { adminContext } from './app/audit.ts';
import { CONSOLE_FILES, readConsoleFile } from './app/console.ts';
import type { OrdersApp } from './app/create-app.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted } from './logger.ts';
import type { ServerOptions } from './server-hono.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its locals this way.
  namespace Express {
    interface Locals {
      /** The error a route failed with, for the request log. */
      error?: unknown;
    }
  }
}

/** The Express application (no socket). */
export function createExpressApp(app: OrdersApp, options: ServerOptions): express.Express {
  const { logger, publicUrl } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
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
      logRequest(logger, {
        method: req.method,
        url: req.originalUrl,
        status: res.statusCode,
        durationMs: performance.now() - started,
        key: key && { id: key.id, last4: key.last4 },
        error: res.locals.error,
        aborted,
      });
    };
    res.on('finish', () => log(requestAborted(req)));
    // No `finish` when the connection closed first: a client that went away mid-body (or
    // whose body Node's parser refused) is still logged, once, as aborted.
    res.on('close', () => {
      if (!res.writableFinished) log(true);
    });
    next();
  });

  // Before routing (Express would decode a `:param`, or match `/a/../b` as sent): a malformed
  // path or a dot segment is 400 on every server (core's policy, docs/adapters.md).
  // Refusals go to problemHandler() below, which records each for the request log line.
  server.use(checkRequest());

  const { guard, scopes, costs } = app;
  const orders = apiKey({ guard, scopes: scopes.orders, cost: costs.orders, route: 'GET /api/orders' });
  const reports = apiKey({ guard, scopes: scopes.reports, cost: costs.reports, route: 'GET /api/reports/daily' });
  const admin = apiKey({ guard, scopes: scopes.keys });
  // Raw bytes whatever the Content-Type, decoded as UTF-8 like Hono's `text()`: the app
  // layer checks the headers first (so body-parser never inflates or decodes a charset)
  // and parses the rest, so both servers answer alike. Too large → 413, via the handler.
  const utf8 = new TextDecoder();
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES, inflate: false });
  const body: express.RequestHandler = function jsonBodyBytes(req, res, next) {
    try {
      assertJsonBodyHeaders(req.get('content-type'), req.get('content-encoding'));
    } catch (error) {
      next(error);
      return;
    }
    // The limit's refusal reads as on the other servers (413, same detail).
    raw(req, res, (error?: unknown) => {
      const tooLarge = (error as { type?: unknown } | undefined)?.type === 'entity.too.large';
      next(tooLarge ? Object.assign(new Error(`The body is larger than ${MAX_BODY_BYTES} bytes`, { cause: error }), { status: 413, expose: true }) : error);
    });
  };
  const jsonBody = (req: Request) =>
    parseJsonObject(Buffer.isBuffer(req.body) ? utf8.decode(req.body) : '', req.get('content-type'), req.get('content-encoding'));
  const query = (req: Request) => new URL(req.originalUrl, 'http://localhost').searchParams;

  // Express lists no routes through a documented API: each is recorded as it is registered,
  // so that notFoundHandler() answers a known path under another method with 405 and Allow.
  const routes: { method: string; path: string }[] = [];
  const route = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, ...handlers: express.RequestHandler[]): void => {
    routes.push({ method, path });
    server[method](path, handlers);
  };

  // Who an admin change is made by, for the audit log: the admin key and the request id,
  // which the response carries back (the one the client sent, or the one made here).
  const who = (req: Request, res: Response) => {
    const context = adminContext(res.locals.apiKey.id, req.get('x-request-id'));
    res.set('x-request-id', context.requestId);
    return context;
  };

  route('get', '/healthz', async (_req, res) => {
    res.json(await app.health());
  });
  route('get', DOCS_PATHS.document, (_req, res) => {
    res.json(app.openapi);
  });
  route('get', DOCS_PATHS.page, (_req, res) => {
    res.type('html').send(DOCS_HTML);
  });
  route('get', DOCS_PATHS.script, (_req, res) => {
    res.set({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' }).send(scalarBundle());
  });

  for (const file of CONSOLE_FILES) {
    route('get', file.path, async (_req, res) => {
      const { body, headers } = await readConsoleFile(file);
      res.set(headers).send(body);
    });
  }

  route('get', '/api/orders', orders, paginate(app.paginators.orders, pageOptions), async (_req, res) => {
    const { rows, total } = await app.orders.list(res.locals.page);
    await sendPage(res, rows, total === undefined ? {} : { total });
  });

  route('get', '/api/reports/daily', reports, async (req, res) => reply(res, await app.reports.daily({ query: query(req) })));

  route('post', '/api/keys', admin, body, async (req, res) => reply(res, await app.keys.issue(jsonBody(req), who(req, res))));
  route('get', '/api/keys', admin, paginate(app.paginators.keys, pageOptions), async (_req, res) => {
    const { rows, total } = await app.keys.list(res.locals.page);
    await sendPage(res, rows, total === undefined ? {} : { total });
  });
  route('get', '/api/keys/:id', admin, async (req, res) => reply(res, await app.keys.get(req.params.id as string)));
  route('post', '/api/keys/:id/rotate', admin, body, async (req, res) =>
    reply(res, await app.keys.rotate(req.params.id as string, jsonBody(req), who(req, res))),
  );
  route('patch', '/api/keys/:id', admin, body, async (req, res) => reply(res, await app.keys.update(req.params.id as string, jsonBody(req), who(req, res))));
  route('patch', '/api/keys/:id/limits', admin, body, async (req, res) =>
    reply(res, await app.keys.updateLimits(req.params.id as string, jsonBody(req), who(req, res))),
  );
  route('delete', '/api/keys/:id', admin, async (req, res) => reply(res, await app.keys.revoke(req.params.id as string, who(req, res))));

  route('post', '/api/owners', admin, body, async (req, res) => reply(res, await app.owners.create(jsonBody(req), who(req, res))));
  route('get', '/api/owners', admin, paginate(app.paginators.owners, pageOptions), async (_req, res) => {
    const { rows, total } = await app.owners.list(res.locals.page);
    await sendPage(res, rows, total === undefined ? {} : { total });
  });
  route('get', '/api/owners/:id', admin, async (req, res) => reply(res, await app.owners.get(req.params.id as string)));
  route('patch', '/api/owners/:id', admin, body, async (req, res) => reply(res, await app.owners.update(req.params.id as string, jsonBody(req), who(req, res))));
  route('delete', '/api/owners/:id', admin, async (req, res) => reply(res, await app.owners.remove(req.params.id as string, who(req, res))));
  // Usage (docs/usage.md): requests per outcome and credits, per key, per owner, top keys.
  route('get', '/api/keys/:id/usage', admin, async (req, res) => reply(res, await app.usage.key(req.params.id as string, query(req))));
  route('get', '/api/owners/:id/usage', admin, async (req, res) => reply(res, await app.usage.owner(req.params.id as string, query(req))));
  route('get', '/api/usage/top', admin, async (req, res) => reply(res, await app.usage.top(query(req))));
  route('get', '/api/owners/:id/keys', admin, paginate(app.paginators.ownerKeys, pageOptions), async (req, res) => {
    const { rows, total } = await app.owners.listKeys(req.params.id as string, res.locals.page);
    await sendPage(res, rows, total === undefined ? {} : { total });
  });

  route('post', '/api/roles', admin, body, async (req, res) => reply(res, await app.roles.create(jsonBody(req), who(req, res))));
  route('get', '/api/roles', admin, async (_req, res) => reply(res, await app.roles.list()));
  route('get', '/api/roles/:name', admin, async (req, res) => reply(res, await app.roles.get(req.params.name as string)));
  route('patch', '/api/roles/:name', admin, body, async (req, res) => reply(res, await app.roles.update(req.params.name as string, jsonBody(req), who(req, res))));
  route('delete', '/api/roles/:name', admin, async (req, res) => reply(res, await app.roles.remove(req.params.name as string, who(req, res))));
  route('get', '/api/keys/:id/roles', admin, async (req, res) => reply(res, await app.roles.keyRoles(req.params.id as string)));
  route('put', '/api/keys/:id/roles', admin, body, async (req, res) => reply(res, await app.roles.setKeyRoles(req.params.id as string, jsonBody(req), who(req, res))));
  route('get', '/api/owners/:id/roles', admin, async (req, res) => reply(res, await app.roles.ownerRoles(req.params.id as string)));
  route('put', '/api/owners/:id/roles', admin, body, async (req, res) => reply(res, await app.roles.setOwnerRoles(req.params.id as string, jsonBody(req), who(req, res))));

  route('get', '/api/audit', admin, paginate(app.paginators.audit, pageOptions), async (_req, res) => {
    const { rows, total } = await app.audit.list(res.locals.page);
    await sendPage(res, rows, total === undefined ? {} : { total });
  });

  server.use(notFoundHandler({ routes }));
  // The error is kept for the request log, written on `finish`.
  server.use(problemHandler({ onError: (error, req) => void (req.res && (req.res.locals.error = error)) }));
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
