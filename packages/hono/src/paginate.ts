/**
 * `paginate()` plans the page from the raw query string; `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision is core's.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, queryStringOf } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, PageResult, Paginator } from '@keyset/core';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { GUARD_HEADERS } from './api-key.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's page plan, set by `paginate()`: pass it to your source. */
    page: PagePlan;
  }
}

/** Options of `paginate()`. */
export interface PaginateOptions {
  /** The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor. Read them from `query`, the raw query string. @default no filters */
  filters?: (c: Context, query: URLSearchParams) => Record<string, unknown>;
  /** Public base URL for `Link` headers behind a proxy (`'https://api.example.com'`); the request's path and query are appended. @default the request URL (`c.req.url`) */
  baseUrl?: string | URL;
}

const PAGINATE_OPTIONS = { filters: true, baseUrl: true } as const satisfies KnownOptions<PaginateOptions>;

/** Options of `sendPage()`. */
export interface SendPageOptions {
  /** Offset mode's `total`: a number, or what `countTotal(plan, counters)` gives. */
  total?: number | CountedTotal;
}

type PageState = { readonly paginator: Paginator<never>; readonly plan: PagePlan; readonly url: string };

/** This request's page state, for `sendPage()` (a context variable). */
const PAGE_STATE = 'keyset:pageState';
const NO_FILTERS = Object.freeze({});

/**
 * Middleware that plans this request's page and stores the plan as `c.var.page`.
 * Bad `limit`, `offset` or `cursor` parameters throw core's 400 problems.
 *
 * @example
 * ```ts
 * app.get('/orders', paginate(orders), async (c) => {
 *   const { rows, total } = paginateArray(allOrders, c.var.page, orders.sort);
 *   return sendPage(c, rows, { total });
 * });
 * ```
 */
export function paginate<Row>(paginator: Paginator<Row>, options: PaginateOptions = {}): MiddlewareHandler {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
    throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  }
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function');
  const base = normalizeBaseUrl(baseUrl);
  const pages = paginator as Paginator<never>;
  return function paginate(c, next) {
    try {
      const requestUrl = c.req.url;
      const url = base === undefined ? requestUrl : rebase(requestUrl, base);
      // The raw query string, never `c.req.query()`: repeated parameters must stay visible.
      const query = parseQueryString(queryStringOf(requestUrl));
      const planOptions = filters === undefined ? NO_FILTERS : { filters: filters(c, query) };
      return paginator.plan(query, planOptions).then((plan) => proceed(c, next, { paginator: pages, plan, url }));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** Path and query on the public base URL. */
function rebase(requestUrl: string, base: string): string {
  const { pathname, search } = new URL(requestUrl);
  return `${base}${pathname}${search}`;
}

function proceed(c: Context, next: Next, state: PageState): Promise<void> {
  c.set(PAGE_STATE, state);
  c.set('page', state.plan);
  return Promise.resolve(next()).then(nothing);
}

/** A middleware's promise resolves to nothing once the chain has run (a value would be taken for the response). */
const nothing = (): undefined => undefined;

/**
 * Sends `rows` (fetched with `c.var.page`) as the page envelope, with its `Link` header.
 *
 * @example
 * ```ts
 * return sendPage(c, rows, { total });
 * ```
 */
export function sendPage<Row>(c: Context, rows: readonly Row[], options?: SendPageOptions): Promise<Response> {
  try {
    const state = c.get(PAGE_STATE) as PageState | undefined;
    if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
    const total = options?.total;
    const { paginator, plan, url } = state;
    const pageOptions = total === undefined ? { url } : { url, total };
    return paginator.page(plan, rows as readonly never[], pageOptions).then((paged) => pageResponse(c, paged));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The page as a 200 through `c.body()`, which keeps headers other middleware set (CORS, a request id…). */
function pageResponse(c: Context, { body, headers }: PageResult<unknown>): Response {
  const guardHeaders = c.get(GUARD_HEADERS) as Readonly<Record<string, string>> | undefined;
  return c.body(JSON.stringify(body), 200, { 'content-type': 'application/json', ...guardHeaders, ...headers });
}
