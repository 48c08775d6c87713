/**
 * `paginate()` plans the page from the raw query string; `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision (mode, limits, cursor checks) is the core's.
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { assertKnownOptions, hostError, type KnownOptions, maybeSyncVariant, normalizeBaseUrl, parseQueryString } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types its locals this way.
  namespace Express {
    interface Locals {
      /** This request's page plan, set by `paginate()`: pass it to your source. */
      page: PagePlan;
    }
  }
}

/** Options of `paginate()`. */
export interface PaginateOptions {
  /**
   * The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor so a cursor
   * cannot be replayed against another filter. Read them from `query`, the raw query
   * string: `req.query` (parsed by `qs`) turns repeated parameters into arrays.
   * @default no filters
   */
  filters?: (req: Request, query: URLSearchParams) => Record<string, unknown>;
  /**
   * Public base URL for `Link` headers, e.g. `'https://api.example.com'`; the request's
   * path and query are appended. Without it the URL comes from `req.protocol` and
   * `req.host`, which trust `X-Forwarded-*` only under the app's `trust proxy` setting.
   * @default the request's own URL
   */
  baseUrl?: string | URL;
}

/** Every name `PaginateOptions` knows, checked when the middleware is made. */
const PAGINATE_OPTIONS = { filters: true, baseUrl: true } as const satisfies KnownOptions<PaginateOptions>;

/** Options of `sendPage()`. */
export interface SendPageOptions {
  /**
   * Offset mode's `total`: a number (an exact count), or what `countTotal(plan, counters)`
   * gives (an estimate or a capped count, sent with `totalEstimated` / `totalAtLeast`).
   */
  total?: number | CountedTotal;
}

interface PageState {
  readonly paginator: Paginator<never>;
  readonly plan: PagePlan;
  readonly url: string;
}

// In `res.locals`, Express's documented per-request store (a symbol-keyed member, which
// no template engine or user key can collide with).
const STATE = Symbol('keyset.pageState');
const slot = (res: Response): { [STATE]?: PageState } => res.locals as unknown as { [STATE]?: PageState };

/**
 * Middleware that plans this request's page and stores the plan as `res.locals.page`.
 * Bad `limit`, `offset` or `cursor` parameters throw the core's 400 problems.
 * `req.query` is neither read nor modified.
 *
 * @example
 * ```ts
 * app.get('/orders', paginate(orders), async (req, res) => {
 *   const { rows, total } = paginateArray(allOrders, res.locals.page, orders.sort);
 *   await sendPage(res, rows, { total });
 * });
 * ```
 */
export function paginate<Row>(paginator: Paginator<Row>, options: PaginateOptions = {}): RequestHandler {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
    throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  }
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function');
  const base = normalizeBaseUrl(baseUrl);
  // Not `async`: Express 5 passes a synchronous throw and a rejected promise alike to `next(error)`.
  return function paginate(req, res, next) {
    const url = publicUrl(req, base);
    // The URL's query as the core reads it, split without URLSearchParams' per-character parser when nothing needs decoding.
    const query = parseQueryString(url.search);
    const planOptions = filters === undefined ? NO_FILTERS : { filters: filters(req, query) };
    // The paginator's synchronous twin when it has one (a synchronous crypto provider): no promise to wait for.
    const fast = maybeSyncVariant(paginator.plan);
    const planned = fast !== undefined ? fast(query, planOptions) : paginator.plan(query, planOptions);
    const href = url.href;
    // A twin that has to wait answers with a native Promise, so `instanceof Promise` tells its
    // answers apart (no `then` read from result objects of every shape); without a twin, await.
    if (fast === undefined || planned instanceof Promise) return Promise.resolve(planned).then((page) => keep(res, next, paginator as Paginator<never>, page, href));
    keep(res, next, paginator as Paginator<never>, planned, href);
    return undefined;
  };
}

const NO_FILTERS = Object.freeze({});

function keep(res: Response, next: NextFunction, paginator: Paginator<never>, plan: PagePlan, url: string): void {
  slot(res)[STATE] = { paginator, plan, url };
  res.locals.page = plan;
  next();
}

/**
 * Sends `rows` (fetched with `res.locals.page`) as the page envelope, with a `Link`
 * header when there is a next page.
 *
 * @example
 * ```ts
 * await sendPage(res, rows, { total });
 * ```
 */
export async function sendPage<Row>(res: Response, rows: readonly Row[], options: SendPageOptions = {}): Promise<void> {
  const state = slot(res)[STATE];
  if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total } = options;
  const { paginator, plan, url } = state;
  const pageOptions = total === undefined ? { url } : { url, total };
  const fast = maybeSyncVariant(paginator.page);
  const page = fast !== undefined ? fast(plan, rows as readonly never[], pageOptions) : paginator.page(plan, rows as readonly never[], pageOptions);
  const { body, headers } = fast === undefined || page instanceof Promise ? await page : page;
  res.set(headers);
  res.json(body);
}

/**
 * The absolute URL as the client saw it: the request target (`req.originalUrl`) on a
 * configured public base URL, or on `req.protocol` and `req.host`, which follow the app's
 * `trust proxy` setting (`X-Forwarded-Proto`/`-Host`). Throws 400 `invalid_request`
 * (`field: 'host'`) when that host is none (core's `hostError`).
 */
function publicUrl(req: Request, base: string | undefined): URL {
  const target = originForm(req.originalUrl);
  if (base !== undefined) return new URL(`${base}${target}`);
  const { protocol, host } = req;
  const refused = hostError(host);
  if (refused !== undefined) throw refused;
  if (protocol === 'http' || protocol === 'https') return new URL(`${protocol}://${host}${target}`);
  throw new KeysetError('invalid_request', { detail: 'The forwarded protocol is neither http nor https.', extensions: { field: 'x-forwarded-proto' } });
}

/** Path and query of the request target; an absolute-form target (`GET http://h/p`) reduced to them. */
function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    const { pathname, search } = new URL(target);
    return `${pathname}${search}`;
  } catch {
    return '/';
  }
}
