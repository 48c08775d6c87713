/**
 * The orders API as one Web-standard `(Request) => Response` handler built with
 * `@keyset/fetch`, served on Node by `@hono/node-server`: the same function would run in a
 * Worker, on Bun or Deno. A small router (exact paths, `:id` segments), request logs and
 * the body limit live here; it only translates between HTTP and the app layer (`src/app`).
 * @module
 */
import type { HttpBindings } from '@hono/node-server';
import { KeysetError, type VerifiedKey } from '@keyset/core';
import { apiKey, checkRequest, notFoundHandler, paginate, problemHandler, problemResponse, sendPage } from '@keyset/fetch';
import type { Server } from 'node:http';
import type { AppResponse } from './app/app-types.ts';
import { DOCS_HTML, DOCS_PATHS, scalarBundle } from './app/api-docs.ts';
import { adminContext } from './app/audit.ts';
import { CONSOLE_FILES, readConsoleFile } from './app/console.ts';
import type { OrdersApp } from './app/create-app.ts';
import { assertJsonBodyHeaders, MAX_BODY_BYTES, parseJsonObject } from './app/validation.ts';
import { logRequest, requestAborted } from './logger.ts';
import type { ServerOptions } from './server-hono.ts';
import { createNodeFetchServer } from './node-fetch-server.ts';

/** What the platform passes after the request: `@hono/node-server`'s Node objects, or nothing. */
export type Platform = Partial<HttpBindings> | undefined;

/** Path parameters of the matched route (`:id`), decoded. */
type Params = Readonly<Record<string, string>>;
type Route = (request: Request, params: Params, platform: Platform) => Response | Promise<Response>;

/** The handler: a `Request` (and, on Node, the socket's bindings) in, a `Response` out. */
export type OrdersFetchHandler = (request: Request, platform?: Platform) => Promise<Response>;

/** The application as one `fetch` handler (no socket): also callable directly in tests. */
export function createFetchHandler(app: OrdersApp, options: ServerOptions): OrdersFetchHandler {
  const { logger, publicUrl } = options;
  const pageOptions = publicUrl === undefined ? {} : { baseUrl: publicUrl };
  // What the request log needs, kept beside each Request.
  const keys = new WeakMap<Request, VerifiedKey>();
  const errors = new WeakMap<Request, unknown>();

  const { guard, scopes, costs } = app;
  // A `Request` carries no socket: the peer comes from the Node bindings (IP allowlists).
  const clientAddress = (_request: Request, _params: Params, platform: Platform) => platform?.incoming?.socket.remoteAddress;
  const withKey =
    (checks: { scopes: readonly string[]; cost?: number; route?: string }, route: Route): Route =>
      apiKey({ guard, ...checks, clientAddress })<[Params, Platform]>((request, key, params, platform) => {
        keys.set(request, key);
        return route(request, params, platform);
      });
  const orders = (route: Route) => withKey({ scopes: scopes.orders, cost: costs.orders, route: 'GET /api/orders' }, route);
  const reports = (route: Route) => withKey({ scopes: scopes.reports, cost: costs.reports, route: 'GET /api/reports/daily' }, route);
  const admin = (route: Route) => withKey({ scopes: scopes.keys }, route);
  /** An admin route with a JSON body: headers checked before the body is read, which is after the key. */
  const adminBody = (handle: (request: Request, params: Params, body: Record<string, unknown>) => Promise<AppResponse>): Route =>
    admin(async (request, params, platform) => {
      const [type, coding] = [request.headers.get('content-type'), request.headers.get('content-encoding')];
      assertJsonBodyHeaders(type, coding);
      const text = await readText(request);
      if (text === undefined) {
        // The body limit is the server's, like Hono's `bodyLimit()`: 413 (RFC 9110 §15.5.14).
        // The platform lets the problem say Connection: close, as the rest of the body is never read.
        const error = new KeysetError('invalid_request', { detail: `The body is larger than ${MAX_BODY_BYTES} bytes` });
        errors.set(request, error);
        return withStatus(problemResponse(error, { request, platform }), 413);
      }
      return reply(await handle(request, params, parseJsonObject(text, type, coding)));
    });
  const query = (request: Request) => new URL(request.url).searchParams;
  // Who an admin change is made by, for the audit log: the admin key and the request id,
  // which the response carries back (the one the client sent, or the one made here).
  const requestIds = new WeakMap<Request, string>();
  const who = (request: Request) => {
    const context = adminContext(keys.get(request)!.id, request.headers.get('x-request-id'));
    requestIds.set(request, context.requestId);
    return context;
  };

  const routes: readonly (readonly [method: string, path: string, route: Route])[] = [
    ['GET', '/healthz', async () => Response.json(await app.health())],
    ['GET', DOCS_PATHS.document, () => Response.json(app.openapi)],
    ['GET', DOCS_PATHS.page, () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } })],
    [
      'GET',
      DOCS_PATHS.script,
      () => new Response(new Uint8Array(scalarBundle()), { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' } }),
    ],
    ...CONSOLE_FILES.map((file): readonly [string, string, Route] => [
      'GET',
      file.path,
      async () => {
        const { body, headers } = await readConsoleFile(file);
        return new Response(new Uint8Array(body), { headers });
      },
    ]),
    [
      'GET',
      '/api/orders',
      orders(async (request) => {
        const page = await paginate(request, app.paginators.orders, pageOptions);
        const { rows, total } = await app.orders.list(page);
        return sendPage(page, rows, total === undefined ? {} : { total });
      }),
    ],
    ['GET', '/api/reports/daily', reports(async (request) => reply(await app.reports.daily({ query: query(request) })))],
    // Usage (docs/usage.md): requests per outcome and credits, per key, per owner, top keys.
    ['GET', '/api/keys/:id/usage', admin(async (request, { id }) => reply(await app.usage.key(id!, query(request))))],
    ['GET', '/api/owners/:id/usage', admin(async (request, { id }) => reply(await app.usage.owner(id!, query(request))))],
    ['GET', '/api/usage/top', admin(async (request) => reply(await app.usage.top(query(request))))],
    ['POST', '/api/keys', adminBody((request, _params, body) => app.keys.issue(body, who(request)))],
    [
      'GET',
      '/api/keys',
      admin(async (request) => {
        const page = await paginate(request, app.paginators.keys, pageOptions);
        const { rows, total } = await app.keys.list(page);
        return sendPage(page, rows, total === undefined ? {} : { total });
      }),
    ],
    ['GET', '/api/keys/:id', admin(async (_request, { id }) => reply(await app.keys.get(id!)))],
    ['POST', '/api/keys/:id/rotate', adminBody((request, { id }, body) => app.keys.rotate(id!, body, who(request)))],
    ['PATCH', '/api/keys/:id', adminBody((request, { id }, body) => app.keys.update(id!, body, who(request)))],
    ['PATCH', '/api/keys/:id/limits', adminBody((request, { id }, body) => app.keys.updateLimits(id!, body, who(request)))],
    ['DELETE', '/api/keys/:id', admin(async (request, { id }) => reply(await app.keys.revoke(id!, who(request))))],
    ['POST', '/api/owners', adminBody((request, _params, body) => app.owners.create(body, who(request)))],
    [
      'GET',
      '/api/owners',
      admin(async (request) => {
        const page = await paginate(request, app.paginators.owners, pageOptions);
        const { rows, total } = await app.owners.list(page);
        return sendPage(page, rows, total === undefined ? {} : { total });
      }),
    ],
    ['GET', '/api/owners/:id', admin(async (_request, { id }) => reply(await app.owners.get(id!)))],
    ['PATCH', '/api/owners/:id', adminBody((request, { id }, body) => app.owners.update(id!, body, who(request)))],
    ['DELETE', '/api/owners/:id', admin(async (request, { id }) => reply(await app.owners.remove(id!, who(request))))],
    [
      'GET',
      '/api/owners/:id/keys',
      admin(async (request, { id }) => {
        const page = await paginate(request, app.paginators.ownerKeys, pageOptions);
        const { rows, total } = await app.owners.listKeys(id!, page);
        return sendPage(page, rows, total === undefined ? {} : { total });
      }),
    ],
    ['POST', '/api/roles', adminBody((request, _params, body) => app.roles.create(body, who(request)))],
    ['GET', '/api/roles', admin(async () => reply(await app.roles.list()))],
    ['GET', '/api/roles/:name', admin(async (_request, { name }) => reply(await app.roles.get(name!)))],
    ['PATCH', '/api/roles/:name', adminBody((request, { name }, body) => app.roles.update(name!, body, who(request)))],
    ['DELETE', '/api/roles/:name', admin(async (request, { name }) => reply(await app.roles.remove(name!, who(request))))],
    ['GET', '/api/keys/:id/roles', admin(async (_request, { id }) => reply(await app.roles.keyRoles(id!)))],
    ['PUT', '/api/keys/:id/roles', adminBody((request, { id }, body) => app.roles.setKeyRoles(id!, body, who(request)))],
    ['GET', '/api/owners/:id/roles', admin(async (_request, { id }) => reply(await app.roles.ownerRoles(id!)))],
    ['PUT', '/api/owners/:id/roles', adminBody((request, { id }, body) => app.roles.setOwnerRoles(id!, body, who(request)))],
    [
      'GET',
      '/api/audit',
      admin(async (request) => {
        const page = await paginate(request, app.paginators.audit, pageOptions);
        const { rows, total } = await app.audit.list(page);
        return sendPage(page, rows, total === undefined ? {} : { total });
      }),
    ],
  ];
  const table = routes.map(([method, path, route]) => ({ method, segments: path.split('/'), route }));

  const matching = (pathname: string) =>
    table.flatMap((entry) => {
      const params = match(entry.segments, pathname);
      return params === undefined ? [] : [{ ...entry, params }];
    });
  const notFound = notFoundHandler({ allowedMethods: (pathname) => matching(pathname).map((entry) => entry.method) });

  // checkRequest(): before routing, what servers could read differently (the target, the
  // Host, the Content-Type) is 400 on every server (core's policy, docs/adapters.md, "Requests").
  const handle = problemHandler({ onError: (error, request) => void errors.set(request, error) })(checkRequest()<[Platform]>(async (request, platform) => {
    const candidates = matching(new URL(request.url).pathname);
    // A GET route answers HEAD too (RFC 9110 §9.3.2); Node drops the body.
    const found =
      candidates.find((entry) => entry.method === request.method) ??
      (request.method === 'HEAD' ? candidates.find((entry) => entry.method === 'GET') : undefined);
    return found === undefined ? notFound(request) : found.route(request, found.params, platform);
  }));

  return async function ordersApi(request, platform) {
    const started = performance.now();
    const response = await handle(request, platform);
    const requestId = requestIds.get(request);
    if (requestId !== undefined) response.headers.set('x-request-id', requestId);
    const url = new URL(request.url);
    const key = keys.get(request);
    logRequest(logger, {
      method: request.method,
      url: url.pathname + url.search,
      status: response.status,
      durationMs: performance.now() - started,
      key: key && { id: key.id, last4: key.last4 },
      error: errors.get(request),
      aborted: requestAborted(platform?.incoming),
    });
    return response;
  };
}

/** A Node HTTP server (not yet listening) serving the fetch handler through `@hono/node-server`. */
export function createFetchServer(app: OrdersApp, options: ServerOptions): Server {
  const handler = createFetchHandler(app, options);
  return createNodeFetchServer((request, platform) => handler(request, platform as HttpBindings));
}

/**
 * The params of `pathname` under a route's segments, or `undefined`. Paths match exactly
 * (`/api/orders/` is not `/api/orders`, as on Hono); a `:name` segment takes one non-empty
 * segment, percent-decoded (kept as sent when the encoding is malformed, as Hono does).
 */
function match(segments: readonly string[], pathname: string): Params | undefined {
  const parts = pathname.split('/');
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, segment] of segments.entries()) {
    const part = parts[i]!;
    if (segment.startsWith(':')) {
      if (part === '') return undefined;
      params[segment.slice(1)] = decode(part);
    } else if (segment !== part) return undefined;
  }
  return params;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The body as UTF-8 text, or `undefined` past `MAX_BODY_BYTES` (read no further than that). */
async function readText(request: Request): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) return undefined;
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** A problem response under another status (the body's `status` member follows). */
function withStatus(response: Response, status: number): Promise<Response> {
  return response.json().then((body: Record<string, unknown>) => new Response(JSON.stringify({ ...body, status }), { status, headers: response.headers }));
}

function reply(response: AppResponse): Response {
  const headers = new Headers(response.headers);
  if (response.body === undefined) return new Response(null, { status: response.status, headers });
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(response.body), { status: response.status, headers });
}
