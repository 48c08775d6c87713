/**
 * `paginate()` plans the page from the raw query string; `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision is core's.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, queryStringOf } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { Context, MiddlewareHandler } from 'hono';

/** What `sendPage()` answers with, set by `paginate()`: the paginator, this request's plan and its public URL. */
export interface PageContext {
  readonly paginator: Paginator<never>;
  readonly plan: PagePlan;
  readonly url: string;
}

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's page plan, set by `paginate()`: pass it to your source. */
    page: PagePlan;
    /** What `sendPage()` needs, set by `paginate()` beside `page`. */
    pageContext: PageContext;
    /** The page `sendPage()` answered with, when it built the response itself (`apiKey()` then adds only what it lacks). */
    sentPage: Response;
  }
}

/** Options of `paginate()`. */
export interface PaginateOptions {
  /** The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor, from `query`, the raw query string. @default no filters */
  filters?: (query: URLSearchParams, c: Context) => Record<string, unknown>;
  /** Public base URL for `Link` headers behind a proxy (`'https://api.example.com'`); the request's path and query are appended. @default the request URL (`c.req.url`) */
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

const JSON_CONTENT_TYPE = Object.freeze({ 'content-type': 'application/json' });

/**
 * Middleware that plans this request's page and stores the plan as `c.var.page`.
 * Bad `limit`, `offset` or `cursor` parameters throw core's 400 `KeysetError`s, for
 * `app.onError(problemHandler())` to answer.
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
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function (query, c) => filters');
  const base = normalizeBaseUrl(baseUrl);
  return async function paginate(c, next) {
    const requestUrl = c.req.url;
    // The raw query string, never `c.req.query()`: repeated parameters must stay visible.
    const query = parseQueryString(queryStringOf(requestUrl));
    // A keyset error from `filters` (a bad filter value) is a refusal like the plan's.
    const plan = await paginator.plan(query, filters === undefined ? {} : { filters: filters(query, c) });
    c.set('pageContext', { paginator: paginator as Paginator<never>, plan, url: base === undefined ? requestUrl : rebase(requestUrl, base) });
    c.set('page', plan);
    await next();
  };
}

/** Path and query on the public base URL. */
function rebase(requestUrl: string, base: string): string {
  const { pathname, search } = new URL(requestUrl);
  return `${base}${pathname}${search}`;
}

/**
 * Sends `rows` (fetched with `c.var.page`) as the page envelope, with its `Link` header.
 *
 * @example
 * ```ts
 * return sendPage(c, rows, { total });
 * ```
 */
export async function sendPage<Row>(c: Context, rows: readonly Row[], options: SendPageOptions = {}): Promise<Response> {
  // Typed as always present (see `ContextVariableMap`), absent on a route without paginate().
  const context = c.get('pageContext') as PageContext | undefined;
  if (context === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total, headers } = options;
  const { paginator, plan, url } = context;
  const page = await paginator.page(plan, rows as readonly never[], total === undefined ? { url } : { url, total });
  // Later names win. Onto `{}`: a spread starting with the guard's headers makes new hidden
  // classes on every request.
  const pageHeaders = Object.assign({}, c.get('guardHeaders'), headers, page.headers, JSON_CONTENT_TYPE);
  const text = JSON.stringify(page.body);
  // `c.body()` keeps the headers other middleware set (CORS, a request id…), but with more
  // than one header of ours it copies them all into a `Headers` object, which on Node
  // checks every character of the `Link` value. With nothing else to keep, the record
  // itself is the response's headers.
  if (honoHoldsHeaders(c)) return c.body(text, 200, pageHeaders);
  const response = new Response(text, { status: 200, headers: pageHeaders });
  c.set('sentPage', response);
  return response;
}

/**
 * Whether Hono holds headers for this request's response (`c.header()`, or `c.res` read
 * before): `c.newResponse()` starts from them, and only `c.body()` merges them in.
 */
function honoHoldsHeaders(c: Context): boolean {
  return c.newResponse(null).headers.keys().next().done !== true;
}
