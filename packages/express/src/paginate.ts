/**
 * `paginate()` plans the page from the raw query string; `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision (mode, limits, cursor checks) is the core's.
 * @module
 */
import { ConfigError, normalizeBaseUrl } from '@keyset/core';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { Request, RequestHandler, Response } from 'express';
import { publicUrl } from './internal/request-url.ts';

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

const states = new WeakMap<Response, PageState>();

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
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
    throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  }
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function');
  const base = normalizeBaseUrl(baseUrl);
  return async function paginate(req, res, next) {
    const url = publicUrl(req, base);
    const query = url.searchParams;
    const plan = await paginator.plan(query, filters === undefined ? {} : { filters: filters(req, query) });
    states.set(res, { paginator: paginator as Paginator<never>, plan, url: url.href });
    res.locals.page = plan;
    next();
  };
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
  const state = states.get(res);
  if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total } = options;
  const { body, headers } = await state.paginator.page(
    state.plan,
    rows as readonly never[],
    total === undefined ? { url: state.url } : { url: state.url, total },
  );
  res.set(headers).json(body);
}
