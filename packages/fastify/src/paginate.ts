/**
 * `paginate()` plans the page from the raw query string (never `request.query`);
 * `sendPage(reply, rows)` sends it with its `Link` header (RFC 8288).
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, requestOrigin } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { targetOf } from './check-request.ts';

/** Options of `paginate()`. */
export interface PaginateOptions {
  /** The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor, from `query`, the raw query string (never `request.query`). @default no filters */
  filters?: (query: URLSearchParams, request: FastifyRequest) => Record<string, unknown>;
  /** Public base URL of `Link` headers; path and query are appended. @default `request.protocol` + `request.host` (`X-Forwarded-*` under `trustProxy`) */
  baseUrl?: string | URL;
}

const PAGINATE_OPTIONS = { filters: true, baseUrl: true } as const satisfies KnownOptions<PaginateOptions>;

/** Options of `sendPage()`. */
export interface SendPageOptions {
  /** Offset mode's `total`: a number, or what `countTotal(plan, counters)` gives. */
  total?: number | CountedTotal;
  /** More response headers (`cache-control`); `content-type` is JSON and the page's `Link` wins. @default none */
  headers?: Readonly<Record<string, string>>;
}

/** The hook `paginate()` returns. */
export type PaginateHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

type PageState = { readonly paginator: Paginator<never>; readonly plan: PagePlan; readonly url: string };

// On the request, under a symbol (no WeakMap entry per request for every scavenge to trace).
const STATE = Symbol('keyset.pageState');
const slot = (request: FastifyRequest): { [STATE]?: PageState } => request as unknown as { [STATE]?: PageState };

/**
 * A hook that plans this request's page and stores the plan as `request.page`.
 * Bad `limit`, `offset` or `cursor` parameters throw core's 400 problems.
 *
 * @example
 * ```ts
 * app.get('/orders', { preHandler: paginate(orders) }, async (request, reply) => {
 *   const { rows, total } = paginateArray(allOrders, request.page, orders.sort);
 *   return sendPage(reply, rows, { total });
 * });
 * ```
 */
export function paginate<Row>(paginator: Paginator<Row>, options: PaginateOptions = {}): PaginateHook {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
    throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  }
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function (query, request) => filters');
  const base = normalizeBaseUrl(baseUrl);
  return async function paginate(request) {
    const url = publicUrl(request, base);
    const query = parseQueryString(url.search);
    const plan = await paginator.plan(query, filters === undefined ? {} : { filters: filters(query, request) });
    slot(request)[STATE] = { paginator: paginator as Paginator<never>, plan, url: url.href };
    request.page = plan;
  };
}

/**
 * Sends `rows` (fetched with `request.page`) as the page envelope, with a `Link` header
 * when there is a next page.
 *
 * @example
 * ```ts
 * return sendPage(reply, rows, { total });
 * ```
 */
export async function sendPage<Row>(reply: FastifyReply, rows: readonly Row[], options: SendPageOptions = {}): Promise<FastifyReply> {
  const state = slot(reply.request)[STATE];
  if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total, headers } = options;
  const { paginator, plan, url } = state;
  const page = await paginator.page(plan, rows as readonly never[], total === undefined ? { url } : { url, total });
  if (headers !== undefined) reply.headers(headers);
  return reply.headers(page.headers).type('application/json; charset=utf-8').send(JSON.stringify(page.body));
}

/** The URL the client saw: the target on the base URL, or on `request.protocol` + `request.host` (core's Host rule). */
function publicUrl(request: FastifyRequest, base: string | undefined): URL {
  // An absolute-form target (`GET http://h/p`) is reduced to its path and query.
  const target = targetOf(request).replace(/^https?:\/\/[^/?#]*/i, '');
  const path = target.startsWith('/') ? target : target.startsWith('?') ? `/${target}` : '/';
  if (base !== undefined) return new URL(`${base}${path}`);
  if (request.protocol !== 'http' && request.protocol !== 'https') {
    throw new KeysetError('invalid_request', { detail: 'The forwarded protocol is neither http nor https.', extensions: { field: 'x-forwarded-proto' } });
  }
  return new URL(`${requestOrigin(request.protocol, request.host)}${path}`);
}
