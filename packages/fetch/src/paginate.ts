/**
 * `paginate()` plans the page from the raw query string; `sendPage()` answers it as JSON
 * with its `Link` header (RFC 8288). Every decision is core's.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, queryStringOf } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, PageResult, Paginator } from '@keyset/core';
import { carriedBy, rememberedHeaders } from './api-key.ts';

/** Options of `paginate()`. */
export interface PaginateOptions {
  /** The request's filters (`{ status: 'paid' }`) bound into the cursor: an object, or a function of the raw query. @default no filters */
  filters?: Record<string, unknown> | ((query: URLSearchParams) => Record<string, unknown>);
  /** Public base URL of `Link` headers behind a proxy; path and query are appended. @default the request URL */
  baseUrl?: string | URL;
}

const PAGINATE_OPTIONS = { filters: true, baseUrl: true } as const satisfies KnownOptions<PaginateOptions>;

/** Options of `sendPage()`. */
export interface SendPageOptions {
  /** Offset mode's `total`: a number, or what `countTotal(plan, counters)` gives. */
  total?: number | CountedTotal;
  /** More response headers (`cache-control`); `content-type` is JSON and the page's `Link` wins. @default none */
  headers?: HeadersInit;
}

/** `sent`: a request has one response. */
type PageState = { readonly paginator: Paginator<never>; readonly url: string; readonly request: Request; sent: boolean };

/** What `sendPage()` needs, on the frozen plan `paginate()` returned (non-enumerable: not serialized or spread). */
const STATE = Symbol('keyset.pageState');
type PlanWithState = PagePlan & { readonly [STATE]?: PageState };

/**
 * Plans this request's page (`limit`, `offset`, `cursor`; bad ones are core's 400
 * problems). Pass the plan to your data source, then to `sendPage()`.
 *
 * @example
 * ```ts
 * const page = await paginate(request, orders, { filters: { status } });
 * const { rows, total } = paginateArray(allOrders, page, orders.sort);
 * return sendPage(page, rows, { total });
 * ```
 */
export function paginate<Row>(request: Request, paginator: Paginator<Row>, options?: PaginateOptions): Promise<PagePlan> {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  // Not `async`: the plan is usually ready at once; a throw still comes back as a rejection.
  try {
    const { filters, baseUrl } = options ?? {};
    if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
    if (filters !== undefined && typeof filters !== 'function' && (typeof filters !== 'object' || filters === null)) throw new ConfigError('paginate() filters must be an object or a function of the query');
    const base = normalizeBaseUrl(baseUrl);
    // Sliced from the serialized URL (its first `?` starts the query), not parsed again.
    const query = parseQueryString(queryStringOf(request.url));
    const bound = typeof filters === 'function' ? filters(query) : filters;
    const planOptions = bound === undefined ? {} : { filters: bound };
    return paginator.plan(query, planOptions).then((plan) => remember(plan, paginator as Paginator<never>, request, base));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The plan with its request's state for sendPage(). */
function remember(plan: PagePlan, paginator: Paginator<never>, request: Request, base: string | undefined): PagePlan {
  const url = base === undefined ? request.url : rebase(request.url, base);
  const state: PageState = { paginator, url, request, sent: false };
  return Object.freeze(Object.defineProperty({ ...plan }, STATE, { value: state }));
}

/** Path and query on the public base URL. */
const rebase = (requestUrl: string, base: string): string => `${base}${requestUrl.slice(requestUrl.indexOf('/', requestUrl.indexOf('//') + 2))}`;

/**
 * Answers `rows` (fetched with `plan`) as the page envelope, 200 JSON with its `Link`
 * header. Each plan is answered once (a request has one response).
 *
 * @example
 * ```ts
 * return sendPage(page, rows, { total });
 * ```
 */
export function sendPage<Row>(plan: PagePlan, rows: readonly Row[], options?: SendPageOptions): Promise<Response> {
  try {
    const state = (plan as PlanWithState)[STATE];
    if (state === undefined || state.sent) throw new Error('sendPage() needs the plan paginate() returned for this request, and answers it once');
    state.sent = true;
    const { total, headers: extra } = options ?? {};
    const { paginator, url, request } = state;
    const pageOptions = total === undefined ? { url } : { url, total };
    return paginator.page(plan, rows as readonly never[], pageOptions).then((paged) => pageResponse(paged, request, extra));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The page as a 200: its envelope as JSON, with the page's, the guard's and `extra` headers. */
function pageResponse({ body, headers }: PageResult<unknown>, request: Request, extra: HeadersInit | undefined): Response {
  const text = JSON.stringify(body);
  if (extra !== undefined) {
    const response = new Headers(extra);
    for (const [name, value] of Object.entries(headers)) response.set(name, value);
    response.set('content-type', 'application/json');
    return new Response(text, { status: 200, headers: response });
  }
  // One plain record in `Headers` order (page, guard, content type): `@hono/node-server` writes it as it is.
  const guard = rememberedHeaders(request);
  const names = ['content-type'];
  for (const name in headers) if (name !== 'content-type') names.push(name);
  for (const name in guard) if (name !== 'content-type' && !Object.hasOwn(headers, name)) names.push(name);
  names.sort();
  const record: Record<string, string> = {};
  for (const name of names) record[name] = name === 'content-type' ? 'application/json' : ((headers[name] ?? guard[name]) as string);
  const response = new Response(text, { status: 200, headers: record });
  carriedBy(request, response);
  return response;
}
