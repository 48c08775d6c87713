/**
 * `paginate()` plans the page from the raw query string; `sendPage()` answers it as JSON
 * with its `Link` header (RFC 8288). Every decision is core's.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, queryStringOf } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import { rememberedHeaders } from './api-key.ts';

/** Options of `paginate()`. */
export interface PaginateOptions {
  /** The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor, from `query`, the raw query string. @default no filters */
  filters?: (query: URLSearchParams, request: Request) => Record<string, unknown>;
  /** Public base URL of `Link` headers behind a proxy; path and query are appended. @default the request URL */
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
 * const page = await paginate(request, orders, { filters: (query) => ({ status: query.get('status') }) });
 * const { rows, total } = paginateArray(allOrders, page, orders.sort);
 * return sendPage(page, rows, { total });
 * ```
 */
export async function paginate<Row>(request: Request, paginator: Paginator<Row>, options: PaginateOptions = {}): Promise<PagePlan> {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function (query, request) => filters');
  const base = normalizeBaseUrl(baseUrl);
  // Sliced from the serialized URL (its first `?` starts the query), not parsed again.
  const query = parseQueryString(queryStringOf(request.url));
  const plan = await paginator.plan(query, filters === undefined ? {} : { filters: filters(query, request) });
  return remember(plan, paginator as Paginator<never>, request, base);
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
export async function sendPage<Row>(plan: PagePlan, rows: readonly Row[], options: SendPageOptions = {}): Promise<Response> {
  const state = (plan as PlanWithState)[STATE];
  if (state === undefined || state.sent) throw new Error('sendPage() needs the plan paginate() returned for this request, and answers it once');
  state.sent = true;
  const { total, headers } = options;
  const { paginator, url, request } = state;
  const page = await paginator.page(plan, rows as readonly never[], total === undefined ? { url } : { url, total });
  // The guard's headers too, so that `apiKey()` finds nothing to add and keeps this response.
  // Later names win. Object.assign onto `{}`, not a spread that starts with another object:
  // V8 clones the guard's headers into an object whose further properties make new hidden
  // classes on every request (from `{}` they are reused).
  return new Response(JSON.stringify(page.body), {
    status: 200,
    headers: Object.assign({}, rememberedHeaders(request), headers, page.headers, { 'content-type': 'application/json' }),
  });
}
