/**
 * Every route of the orders API, declared once: method, path, the key it needs (scopes,
 * cost, the route name its usage is counted under), whether it reads a JSON body or pages
 * a collection, and the app-layer handler. Each `server-*.ts` mounts this table through its
 * adapter's documented API and only translates HTTP to `RouteInput` and back, so the four
 * servers cannot drift apart route by route.
 * @module
 */
import type { AuditContext, CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { AppResponse } from './app-types.ts';
import { DOCS_HTML, DOCS_PATHS, scalarBundle } from './api-docs.ts';
import { CONSOLE_FILES, readConsoleFile } from './console.ts';
import { adminContext } from './audit.ts';
import type { OrdersApp } from './create-app.ts';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The key a route needs, as each adapter's `apiKey()` takes it. */
export interface RouteKey {
  scopes: readonly string[];
  /** Credits spent from the key's quota. */
  cost?: number;
  /** The name usage and metrics count the request under. */
  route?: string;
}

/** What a route's handler is given; the server fills what the route declares. */
export interface RouteInput {
  /** Path parameters (`:id`, `:name`), decoded, as the framework gives them. */
  params: Readonly<Record<string, unknown>>;
  /** The query of the raw URL. */
  query: URLSearchParams;
  /** The JSON object sent (routes with `body`), else empty. */
  body: Record<string, unknown>;
  /**
   * Who makes an admin change, for the audit log: the request's key and its request id
   * (the client's `X-Request-Id` when safe, else a new one), which the server echoes as
   * `X-Request-Id` once this is called.
   */
  by(): AuditContext;
}

/** A file answered as stored (the docs page, its script, the console's files). */
export interface FileResponse {
  status: 200;
  headers: Record<string, string>;
  file: Buffer;
}

interface BaseRoute {
  method: RouteMethod;
  path: string;
  /** Absent: a public route (health, docs, console files). */
  key?: RouteKey;
}

/** A route answering JSON (or nothing, 204) through the app layer. */
export interface JsonRoute extends BaseRoute {
  kind: 'json';
  /** Reads a JSON object body (at most `MAX_BODY_BYTES`), after the key is checked. */
  body?: boolean;
  handle(input: RouteInput): Promise<AppResponse>;
}

/** A collection paged by the adapter's `paginate()` and answered by its `sendPage()`. */
export interface PageRoute extends BaseRoute {
  kind: 'page';
  paginator: Paginator<unknown>;
  list(page: PagePlan, params: RouteInput['params']): Promise<{ rows: unknown[]; total?: number | CountedTotal | undefined }>;
}

/** A file route: its bytes and headers. */
export interface FileRoute extends BaseRoute {
  kind: 'file';
  read(): Promise<FileResponse>;
}

export type Route = JsonRoute | PageRoute | FileRoute;

/** Headers of the docs script: a large bundle that changes only with the package. */
const SCRIPT_HEADERS = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' };

/**
 * The routes of `app`, in the order the servers register them.
 *
 * @example
 * ```ts
 * for (const route of ordersRoutes(app)) console.log(route.method, route.path);
 * ```
 */
export function ordersRoutes(app: OrdersApp): readonly Route[] {
  const { scopes, costs, paginators } = app;
  const orders: RouteKey = { scopes: scopes.orders, cost: costs.orders, route: 'GET /api/orders' };
  const reports: RouteKey = { scopes: scopes.reports, cost: costs.reports, route: 'GET /api/reports/daily' };
  const admin: RouteKey = { scopes: scopes.keys };
  const json = (method: RouteMethod, path: string, key: RouteKey | undefined, handle: JsonRoute['handle']): JsonRoute =>
    key === undefined ? { kind: 'json', method, path, handle } : { kind: 'json', method, path, key, handle };
  /** An admin change (audited through `input.by()`), with a JSON body unless it is a DELETE. */
  const change = (method: RouteMethod, path: string, handle: JsonRoute['handle']): JsonRoute =>
    ({ kind: 'json', method, path, key: admin, body: method !== 'DELETE', handle });
  const page = <Row>(path: string, key: RouteKey, paginator: Paginator<Row>, list: (page: PagePlan, params: RouteInput['params']) => Promise<{ rows: Row[]; total?: number | CountedTotal | undefined }>): PageRoute =>
    ({ kind: 'page', method: 'GET', path, key, paginator: paginator as Paginator<unknown>, list });
  const file = (path: string, read: () => Promise<FileResponse>): FileRoute => ({ kind: 'file', method: 'GET', path, read });
  const param = (params: RouteInput['params'], key: 'id' | 'name'): string => {
    const value = params[key];
    return typeof value === 'string' ? value : '';
  };
  const id = (input: RouteInput): string => param(input.params, 'id');
  const name = (input: RouteInput): string => param(input.params, 'name');

  return Object.freeze([
    json('GET', '/healthz', undefined, async () => ({ status: 200, body: await app.health() })),
    json('GET', DOCS_PATHS.document, undefined, async () => ({ status: 200, body: app.openapi })),
    file(DOCS_PATHS.page, async () => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, file: Buffer.from(DOCS_HTML) })),
    file(DOCS_PATHS.script, async () => ({ status: 200, headers: SCRIPT_HEADERS, file: scalarBundle() })),
    ...CONSOLE_FILES.map((entry) => file(entry.path, async () => {
      const { body, headers } = await readConsoleFile(entry);
      return { status: 200, headers, file: body };
    })),

    page('/api/orders', orders, paginators.orders, (plan) => app.orders.list(plan)),
    json('GET', '/api/reports/daily', reports, (input) => app.reports.daily({ query: input.query })),

    change('POST', '/api/keys', (input) => app.keys.issue(input.body, input.by())),
    page('/api/keys', admin, paginators.keys, (plan) => app.keys.list(plan)),
    json('GET', '/api/keys/:id', admin, (input) => app.keys.get(id(input))),
    change('POST', '/api/keys/:id/rotate', (input) => app.keys.rotate(id(input), input.body, input.by())),
    change('PATCH', '/api/keys/:id', (input) => app.keys.update(id(input), input.body, input.by())),
    change('PATCH', '/api/keys/:id/limits', (input) => app.keys.updateLimits(id(input), input.body, input.by())),
    change('DELETE', '/api/keys/:id', (input) => app.keys.revoke(id(input), input.by())),

    change('POST', '/api/owners', (input) => app.owners.create(input.body, input.by())),
    page('/api/owners', admin, paginators.owners, (plan) => app.owners.list(plan)),
    json('GET', '/api/owners/:id', admin, (input) => app.owners.get(id(input))),
    change('PATCH', '/api/owners/:id', (input) => app.owners.update(id(input), input.body, input.by())),
    change('DELETE', '/api/owners/:id', (input) => app.owners.remove(id(input), input.by())),
    page('/api/owners/:id/keys', admin, paginators.ownerKeys, (plan, params) => app.owners.listKeys(param(params, 'id'), plan)),

    change('POST', '/api/roles', (input) => app.roles.create(input.body, input.by())),
    json('GET', '/api/roles', admin, () => app.roles.list()),
    json('GET', '/api/roles/:name', admin, (input) => app.roles.get(name(input))),
    change('PATCH', '/api/roles/:name', (input) => app.roles.update(name(input), input.body, input.by())),
    change('DELETE', '/api/roles/:name', (input) => app.roles.remove(name(input), input.by())),
    json('GET', '/api/keys/:id/roles', admin, (input) => app.roles.keyRoles(id(input))),
    change('PUT', '/api/keys/:id/roles', (input) => app.roles.setKeyRoles(id(input), input.body, input.by())),
    json('GET', '/api/owners/:id/roles', admin, (input) => app.roles.ownerRoles(id(input))),
    change('PUT', '/api/owners/:id/roles', (input) => app.roles.setOwnerRoles(id(input), input.body, input.by())),

    page('/api/audit', admin, paginators.audit, (plan) => app.audit.list(plan)),
    // Usage (docs/usage.md): requests per outcome and credits, per key, per owner, top keys.
    json('GET', '/api/keys/:id/usage', admin, (input) => app.usage.key(id(input), input.query)),
    json('GET', '/api/owners/:id/usage', admin, (input) => app.usage.owner(id(input), input.query)),
    json('GET', '/api/usage/top', admin, (input) => app.usage.top(input.query)),
  ]);
}

/**
 * `RouteInput.by` of a request with a key: the audit context of the key `keyId()` names
 * and the request's `X-Request-Id`, which `echo` sets on the response, so the client can
 * find its change in the audit log.
 *
 * @example
 * ```ts
 * const by = auditedBy(() => c.var.apiKey.id, c.req.header('x-request-id'), (id) => c.header('x-request-id', id));
 * ```
 */
export function auditedBy(keyId: () => string, requestIdHeader: string | null | undefined, echo: (requestId: string) => void): () => AuditContext {
  return () => {
    const context = adminContext(keyId(), requestIdHeader);
    echo(context.requestId);
    return context;
  };
}
