/**
 * The orders API as one `(Request) => Response` handler: the route table (`app/routes.ts`)
 * mounted with `@keyset/fetch` and `fetch-routing.ts`, with request logs; served on Node by
 * `@hono/node-server`, the same function runs on Bun, Deno or Workers. Translation only.
 * @module
 */
import type { HttpBindings } from '@hono/node-server';
import type { VerifiedKey } from '@keyset/core';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, sendPage } from '@keyset/fetch';
import type { Server } from 'node:http';
import type { OrdersApp } from './app/create-app.ts';
import { auditedBy, ordersRoutes, type Route } from './app/routes.ts';
import { jsonResponse, matchPath, readJsonBody, tooLarge, type Params } from './fetch-routing.ts';
import { logRequest, requestAborted } from './logger.ts';
import { createNodeFetchServer } from './node-fetch-server.ts';
import type { ServerOptions } from './server-hono.ts';

/** What the platform passes after the request: `@hono/node-server`'s Node objects, or nothing. */
export type Platform = Partial<HttpBindings> | undefined;

/** The handler: a `Request` (and, on Node, the socket's bindings) in, a `Response` out. */
export type OrdersFetchHandler = (request: Request, platform?: Platform) => Promise<Response>;

type Handler = (request: Request, params: Params, platform: Platform) => Promise<Response>;

/** The application as one `fetch` handler (no socket): also callable directly in tests. */
export function createFetchHandler(app: OrdersApp, options: ServerOptions): OrdersFetchHandler {
  const { logger, publicUrl } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  // What the request log and the response need, kept beside each Request.
  const [keys, errors, requestIds] = [new WeakMap<Request, VerifiedKey>(), new WeakMap<Request, unknown>(), new WeakMap<Request, string>()];
  // A `Request` carries no socket: the peer comes from the Node bindings (IP allowlists).
  const clientAddress = (_request: Request, _params: Params, platform: Platform) => platform?.incoming?.socket.remoteAddress;

  const answer = async (route: Route, request: Request, params: Params, platform: Platform): Promise<Response> => {
    if (route.kind === 'file') {
      const { status, headers, file } = await route.read();
      return new Response(new Uint8Array(file), { status, headers });
    }
    if (route.kind === 'page') {
      const page = await paginate(request, route.paginator, pageOptions);
      const { rows, total } = await route.list(page, params);
      return sendPage(page, rows, total === undefined ? {} : { total });
    }
    const body = route.body === true ? await readJsonBody(request) : {}; // after the key
    if (body === undefined) {
      const refused = await tooLarge(request, platform);
      errors.set(request, refused.error);
      return refused.response;
    }
    const by = auditedBy(() => keys.get(request)!.id, request.headers.get('x-request-id'), (id) => requestIds.set(request, id));
    return jsonResponse(await route.handle({ params, query: new URL(request.url).searchParams, body, by }));
  };
  const table = ordersRoutes(app).map((route): { route: Route; handle: Handler } => ({
    route,
    handle:
      route.key === undefined
        ? (request, params, platform) => answer(route, request, params, platform)
        : apiKey({ guard: app.guard, ...route.key, clientAddress })<[Params, Platform]>((request, key, params, platform) => {
            keys.set(request, key);
            return answer(route, request, params, platform);
          }),
  }));
  const matching = (pathname: string) =>
    table.flatMap((entry) => {
      const params = matchPath(entry.route.path, pathname);
      return params === undefined ? [] : [{ ...entry, params }];
    });
  const notFound = notFoundHandler({ allowedMethods: (pathname) => matching(pathname).map((entry) => entry.route.method) });

  // checkRequest(): before routing, what servers could read differently (the target, the
  // Host, the Content-Type) is 400 on every server (core's policy, docs/adapters.md, "Requests").
  const handle = problemHandler({ onError: (error, request) => void errors.set(request, error) })(checkRequest()<[Platform]>(async (request, platform) => {
    const candidates = matching(new URL(request.url).pathname);
    // A GET route answers HEAD too (RFC 9110 §9.3.2); Node drops the body.
    const found = candidates.find((entry) => entry.route.method === request.method) ?? (request.method === 'HEAD' ? candidates.find((entry) => entry.route.method === 'GET') : undefined);
    return found === undefined ? notFound(request) : found.handle(request, found.params, platform);
  }));

  return async function ordersApi(request, platform) {
    const started = performance.now();
    const response = await handle(request, platform);
    const requestId = requestIds.get(request);
    if (requestId !== undefined) response.headers.set('x-request-id', requestId);
    const url = new URL(request.url);
    const key = keys.get(request);
    const line = { method: request.method, url: url.pathname + url.search, status: response.status, durationMs: performance.now() - started };
    logRequest(logger, { ...line, key: key && { id: key.id, last4: key.last4 }, error: errors.get(request), aborted: requestAborted(platform?.incoming) });
    return response;
  };
}

/** A Node HTTP server (not yet listening) serving the fetch handler through `@hono/node-server`. */
export function createFetchServer(app: OrdersApp, options: ServerOptions): Server {
  const handler = createFetchHandler(app, options);
  return createNodeFetchServer((request, platform) => handler(request, platform as HttpBindings));
}
