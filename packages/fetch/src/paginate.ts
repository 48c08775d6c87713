/**
 * `paginate()` plans the page from the request's raw query string; `sendPage()` answers
 * it as a JSON `Response` with its `Link` header (RFC 8288). Every decision (mode,
 * limits, cursor checks) is the core's.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, maybeSyncVariant, normalizeBaseUrl, parseQueryString, queryStringOf } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, PageResult, Paginator } from '@keyset/core';
import { carriedBy, rememberedHeaders } from './api-key.ts';

/** Options of `paginate()`. */
export interface PaginateOptions {
  /**
   * The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor so a cursor
   * cannot be replayed against another filter: an object, or a function of the raw query.
   * @default no filters
   */
  filters?: Record<string, unknown> | ((query: URLSearchParams) => Record<string, unknown>);
  /**
   * Public base URL for `Link` headers when a proxy changes scheme, host or path prefix,
   * e.g. `'https://api.example.com'`. The request's path and query are appended.
   * @default the request URL (`request.url`)
   */
  baseUrl?: string | URL;
}

/** Every name `PaginateOptions` knows, checked on every call (a misspelt `filters` would list what it should filter). */
const PAGINATE_OPTIONS = { filters: true, baseUrl: true } as const satisfies KnownOptions<PaginateOptions>;

/** Options of `sendPage()`. */
export interface SendPageOptions {
  /**
   * Offset mode's `total`: a number (an exact count), or what `countTotal(plan, counters)`
   * gives (an estimate or a capped count, sent with `totalEstimated` / `totalAtLeast`).
   */
  total?: number | CountedTotal;
  /**
   * More response headers (e.g. `cache-control`). `content-type` is always JSON; the page's `Link` (when it has a next page) replaces one given here.
   * @default none
   */
  headers?: HeadersInit;
}

interface PageState {
  readonly paginator: Paginator<never>;
  readonly url: string;
  readonly request: Request;
  /** Set once `sendPage()` has answered: a request has one response. */
  sent: boolean;
}

/**
 * Where `sendPage()` finds what `paginate()` learnt: on the plan it returned (a frozen copy
 * of the core's plan with this non-enumerable symbol-keyed member, which neither
 * `JSON.stringify` nor a spread copy carries), so nothing is kept anywhere else between the
 * two calls.
 */
const STATE = Symbol('keyset.pageState');
type PlanWithState = PagePlan & { readonly [STATE]?: PageState };

/**
 * Plans this request's page from its raw query string (`limit`, `offset`, `cursor`).
 * Bad parameters throw the core's 400 problems; `problemHandler()` answers them.
 * Pass the plan to your data source, then to `sendPage()`.
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
  // Not an `async` function: the plan is usually ready at once (a synchronous crypto
  // provider, as on Node). Whatever it throws still comes back as a rejected promise.
  try {
    const { filters, baseUrl } = options === undefined ? NO_OPTIONS : options;
    if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
      throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
    }
    if (filters !== undefined && typeof filters !== 'function' && (typeof filters !== 'object' || filters === null)) {
      throw new ConfigError('paginate() filters must be an object or a function of the query');
    }
    const base = normalizeBaseUrl(baseUrl);
    // The raw query string sliced from the request URL (serialized, so its first `?` starts
    // the query) rather than parsed again with `new URL`.
    const query = parseQueryString(queryStringOf(request.url));
    const bound = typeof filters === 'function' ? filters(query) : filters;
    const planOptions = bound === undefined ? {} : { filters: bound };
    // The paginator's synchronous twin when it has one: no promise to wait for. Any other paginator is awaited.
    const fast = maybeSyncVariant(paginator.plan);
    const planned = fast !== undefined ? fast(query, planOptions) : paginator.plan(query, planOptions);
    const pages = paginator as Paginator<never>;
    return planned instanceof Promise || fast === undefined ? rememberWhenPlanned(planned, pages, request, base) : Promise.resolve(remember(planned, pages, request, base));
  } catch (error) {
    return Promise.reject(error);
  }
}

const NO_OPTIONS: PaginateOptions = Object.freeze({});

/** remember() once the plan is ready (a helper of its own: the synchronous path allocates no closure). */
function rememberWhenPlanned(planned: PagePlan | PromiseLike<PagePlan>, paginator: Paginator<never>, request: Request, base: string | undefined): Promise<PagePlan> {
  return Promise.resolve(planned).then((plan) => remember(plan, paginator, request, base));
}

/** The plan with its request's state for sendPage(). */
function remember(plan: PagePlan, paginator: Paginator<never>, request: Request, base: string | undefined): PagePlan {
  const url = base === undefined ? request.url : rebase(request.url, base);
  const state: PageState = { paginator, url, request, sent: false };
  return Object.freeze(Object.defineProperty({ ...plan }, STATE, { value: state }));
}

/** The request's path and query on the configured public base URL (behind a proxy). */
function rebase(requestUrl: string, base: string): string {
  const { pathname, search } = new URL(requestUrl);
  return `${base}${pathname}${search}`;
}

/**
 * Answers `rows` (fetched with `plan`) as the page envelope, `200 application/json`,
 * with a `Link` header when there is a next page. Each plan is answered once: a second
 * `sendPage()` with the same plan throws (a request has one response).
 *
 * @example
 * ```ts
 * return sendPage(page, rows, { total });
 * ```
 */
export function sendPage<Row>(plan: PagePlan, rows: readonly Row[], options?: SendPageOptions): Promise<Response> {
  // Not an `async` function (see paginate()): the page is usually ready at once.
  try {
    const state = (plan as PlanWithState)[STATE];
    if (state === undefined || state.sent) throw new Error('sendPage() needs the plan paginate() returned for this request, and answers it once');
    state.sent = true;
    const { total, headers: extra } = options === undefined ? NO_SEND_OPTIONS : options;
    const { paginator, url, request } = state;
    const pageOptions = total === undefined ? { url } : { url, total };
    const fast = maybeSyncVariant(paginator.page);
    const page = fast !== undefined ? fast(plan, rows as readonly never[], pageOptions) : paginator.page(plan, rows as readonly never[], pageOptions);
    return page instanceof Promise || fast === undefined ? respondWhenPaged(page, request, extra) : Promise.resolve(pageResponse(page, request, extra));
  } catch (error) {
    return Promise.reject(error);
  }
}

const NO_SEND_OPTIONS: SendPageOptions = Object.freeze({});

/** pageResponse() once the paginator has answered (a helper of its own: the synchronous path allocates no closure). */
function respondWhenPaged(page: PageResult<unknown> | PromiseLike<PageResult<unknown>>, request: Request, extra: HeadersInit | undefined): Promise<Response> {
  return Promise.resolve(page).then((paged) => pageResponse(paged, request, extra));
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
  // One plain header record: the page's headers, the RateLimit headers `apiKey()` recorded
  // for this request (where the page has none of that name), the content type, in the
  // order a `Headers` object lists them. `@hono/node-server` writes such a record as it is;
  // other runtimes build their `Headers` from it.
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
