/**
 * The orders API on Hono: the route table (`app/routes.ts`) mounted with `@keyset/hono`
 * middleware, and request logs. It only translates between HTTP and the app layer.
 * @module
 */
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/hono';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Server } from 'node:http';
import type { OrdersApp } from './app/create-app.ts';
import { auditedBy, ordersRoutes, type Route } from './app/routes.ts';
import type { AppResponse } from './app/app-types.ts';
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
  const answer = async (route: Route, c: Context): Promise<Response> => {
    if (route.kind === 'file') {
      const { status, headers, file } = await route.read();
      return c.body(new Uint8Array(file), status, headers);
    }
    if (route.kind === 'page') {
      const { rows, total } = await route.list(c.var.page, c.req.param());
      return sendPage(c, rows, total === undefined ? {} : { total });
    }
    const by = auditedBy(() => c.var.apiKey.id, c.req.header('x-request-id'), (id) => c.header('x-request-id', id));
    const body = route.body === true ? await jsonBody(c) : {};
    return reply(c, await route.handle({ params: c.req.param(), query: new URL(c.req.url).searchParams, body, by }));
  };
  for (const route of ordersRoutes(app)) {
    const steps: MiddlewareHandler[] = [];
    if (route.key !== undefined) steps.push(apiKey({ guard: app.guard, ...route.key }));
    if (route.kind === 'page') steps.push(paginate(route.paginator, pageOptions));
    if (route.kind === 'json' && route.body === true) steps.push(limitBody);
    hono.on(route.method, [route.path], ...steps, (c) => answer(route, c));
  }
  hono.notFound(notFoundHandler({ app: hono }));
  hono.onError(problemHandler());
  return hono;
}

/** A Node HTTP server (not yet listening) serving the Hono application. */
export function createHonoServer(app: OrdersApp, options: ServerOptions): Server {
  return createNodeFetchServer(createHonoApp(app, options).fetch);
}

function reply(c: Context, response: AppResponse): Response {
  if (response.body === undefined) return c.body(null, response.status as 204, response.headers);
  return c.json(response.body, response.status as ContentfulStatusCode, response.headers);
}
