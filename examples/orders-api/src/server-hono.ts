/**
 * The orders API on Hono: routes, `@keyset/hono` middleware, request logs. It only
 * translates between HTTP and the app layer (`src/app`).
 * @module
 */
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/hono';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Server } from 'node:http';
import type { AppResponse } from './app/app-types.ts';
import { DOCS_HTML, DOCS_PATHS, scalarBundle } from './app/api-docs.ts';
import { adminContext } from './app/audit.ts';
import { CONSOLE_FILES, readConsoleFile } from './app/console.ts';
import type { OrdersApp } from './app/create-app.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted, type IncomingRequestState, type Logger } from './logger.ts';
import { createNodeFetchServer } from './node-fetch-server.ts';

/** Options of the server builders. */
export interface ServerOptions {
  logger: Logger;
  /** External base URL for `Link` headers behind a proxy (`PUBLIC_URL`). */
  publicUrl?: string | undefined;
}

/** The Hono application (no socket): also usable with `app.request()` in tests. */
export function createHonoApp(app: OrdersApp, options: ServerOptions): Hono {
  const { logger, publicUrl } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  const hono = new Hono();

  hono.use(async function requestLog(c, next) {
    const started = performance.now();
    await next();
    const key = c.get('apiKey');
    const url = new URL(c.req.url);
    logRequest(logger, {
      method: c.req.method,
      url: url.pathname + url.search,
      status: c.res.status,
      durationMs: performance.now() - started,
      key: key && { id: key.id, last4: key.last4 },
      // keyset's refusals reach app.onError as the KeysetError itself (its code, and for a
      // refused key the reason), as the app's own errors do.
      error: c.error,
      // On @hono/node-server, `env.incoming` is the Node request (absent with `app.request()`).
      aborted: requestAborted((c.env as { incoming?: IncomingRequestState } | undefined)?.incoming),
    });
  });

  // Before routing answers: what servers could read differently (the target, the Host, the
  // Content-Type) is 400 on every server (core's policy, docs/adapters.md, "Requests").
  hono.use(checkRequest());

  const { guard, scopes, costs } = app;
  const orders = apiKey({ guard, scopes: scopes.orders, cost: costs.orders, route: 'GET /api/orders' });
  const reports = apiKey({ guard, scopes: scopes.reports, cost: costs.reports, route: 'GET /api/reports/daily' });
  const admin = apiKey({ guard, scopes: scopes.keys });
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new HTTPException(413, { message: `The body is larger than ${MAX_BODY_BYTES} bytes` });
    },
  });
  const jsonBody = async (c: Context) => {
    const [type, coding] = [c.req.header('content-type'), c.req.header('content-encoding')];
    assertJsonBodyHeaders(type, coding); // before reading: a coded body is never decoded as text
    return parseJsonObject(await c.req.text(), type, coding);
  };

  // Who an admin change is made by, for the audit log: the admin key and the request id,
  // which the response carries back (the one the client sent, or the one made here).
  const who = (c: Context) => {
    const context = adminContext(c.var.apiKey.id, c.req.header('x-request-id'));
    c.header('x-request-id', context.requestId);
    return context;
  };

  hono.get('/healthz', async (c) => c.json(await app.health()));
  hono.get(DOCS_PATHS.document, (c) => c.json(app.openapi));
  hono.get(DOCS_PATHS.page, (c) => c.html(DOCS_HTML));
  hono.get(DOCS_PATHS.script, (c) =>
    c.body(new Uint8Array(scalarBundle()), 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' }),
  );

  for (const file of CONSOLE_FILES) {
    hono.get(file.path, async (c) => {
      const { body, headers } = await readConsoleFile(file);
      return c.body(new Uint8Array(body), 200, headers);
    });
  }

  hono.get('/api/orders', orders, paginate(app.paginators.orders, pageOptions), async (c) => {
    const { rows, total } = await app.orders.list(c.var.page);
    return sendPage(c, rows, total === undefined ? {} : { total });
  });

  hono.get('/api/reports/daily', reports, async (c) => reply(c, await app.reports.daily({ query: new URL(c.req.url).searchParams })));

  hono.post('/api/keys', admin, limitBody, async (c) => reply(c, await app.keys.issue(await jsonBody(c), who(c))));
  hono.get('/api/keys', admin, paginate(app.paginators.keys, pageOptions), async (c) => {
    const { rows, total } = await app.keys.list(c.var.page);
    return sendPage(c, rows, total === undefined ? {} : { total });
  });
  hono.get('/api/keys/:id', admin, async (c) => reply(c, await app.keys.get(c.req.param('id'))));
  hono.post('/api/keys/:id/rotate', admin, limitBody, async (c) => reply(c, await app.keys.rotate(c.req.param('id'), await jsonBody(c), who(c))));
  hono.patch('/api/keys/:id', admin, limitBody, async (c) => reply(c, await app.keys.update(c.req.param('id'), await jsonBody(c), who(c))));
  hono.patch('/api/keys/:id/limits', admin, limitBody, async (c) => reply(c, await app.keys.updateLimits(c.req.param('id'), await jsonBody(c), who(c))));
  hono.delete('/api/keys/:id', admin, async (c) => reply(c, await app.keys.revoke(c.req.param('id'), who(c))));

  hono.post('/api/owners', admin, limitBody, async (c) => reply(c, await app.owners.create(await jsonBody(c), who(c))));
  hono.get('/api/owners', admin, paginate(app.paginators.owners, pageOptions), async (c) => {
    const { rows, total } = await app.owners.list(c.var.page);
    return sendPage(c, rows, total === undefined ? {} : { total });
  });
  hono.get('/api/owners/:id', admin, async (c) => reply(c, await app.owners.get(c.req.param('id'))));
  hono.patch('/api/owners/:id', admin, limitBody, async (c) => reply(c, await app.owners.update(c.req.param('id'), await jsonBody(c), who(c))));
  hono.delete('/api/owners/:id', admin, async (c) => reply(c, await app.owners.remove(c.req.param('id'), who(c))));
  hono.get('/api/owners/:id/keys', admin, paginate(app.paginators.ownerKeys, pageOptions), async (c) => {
    const { rows, total } = await app.owners.listKeys(c.req.param('id'), c.var.page);
    return sendPage(c, rows, total === undefined ? {} : { total });
  });

  hono.post('/api/roles', admin, limitBody, async (c) => reply(c, await app.roles.create(await jsonBody(c), who(c))));
  hono.get('/api/roles', admin, async (c) => reply(c, await app.roles.list()));
  hono.get('/api/roles/:name', admin, async (c) => reply(c, await app.roles.get(c.req.param('name'))));
  hono.patch('/api/roles/:name', admin, limitBody, async (c) => reply(c, await app.roles.update(c.req.param('name'), await jsonBody(c), who(c))));
  hono.delete('/api/roles/:name', admin, async (c) => reply(c, await app.roles.remove(c.req.param('name'), who(c))));
  hono.get('/api/keys/:id/roles', admin, async (c) => reply(c, await app.roles.keyRoles(c.req.param('id'))));
  hono.put('/api/keys/:id/roles', admin, limitBody, async (c) => reply(c, await app.roles.setKeyRoles(c.req.param('id'), await jsonBody(c), who(c))));
  hono.get('/api/owners/:id/roles', admin, async (c) => reply(c, await app.roles.ownerRoles(c.req.param('id'))));
  hono.put('/api/owners/:id/roles', admin, limitBody, async (c) => reply(c, await app.roles.setOwnerRoles(c.req.param('id'), await jsonBody(c), who(c))));

  hono.get('/api/audit', admin, paginate(app.paginators.audit, pageOptions), async (c) => {
    const { rows, total } = await app.audit.list(c.var.page);
    return sendPage(c, rows, total === undefined ? {} : { total });
  });
  // Usage (docs/usage.md): requests per outcome and credits, per key, per owner, top keys.
  const usageQuery = (c: Context) => new URL(c.req.url).searchParams;
  hono.get('/api/keys/:id/usage', admin, async (c) => reply(c, await app.usage.key(c.req.param('id'), usageQuery(c))));
  hono.get('/api/owners/:id/usage', admin, async (c) => reply(c, await app.usage.owner(c.req.param('id'), usageQuery(c))));
  hono.get('/api/usage/top', admin, async (c) => reply(c, await app.usage.top(usageQuery(c))));

  hono.notFound(notFoundHandler({ app: hono }));
  hono.onError(problemHandler());
  return hono;
}

/** A Node HTTP server (not yet listening) serving the Hono application. */
export function createHonoServer(app: OrdersApp, options: ServerOptions): Server {
  const hono = createHonoApp(app, options);
  return createNodeFetchServer(hono.fetch);
}

function reply(c: Context, response: AppResponse): Response {
  if (response.body === undefined) return c.body(null, response.status as 204, response.headers);
  return c.json(response.body, response.status as ContentfulStatusCode, response.headers);
}
