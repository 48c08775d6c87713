/**
 * `paginate()` plans the page from the raw query string; `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision (mode, limits, cursor checks) is core's.
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { assertKnownOptions, type KnownOptions, normalizeBaseUrl, parseQueryString, requestOrigin } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { Request, RequestHandler, Response } from 'express';

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
   * The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor, from `query`,
   * the raw query string (`req.query` turns repeated parameters into arrays).
   * @default no filters
   */
  filters?: (query: URLSearchParams, req: Request) => Record<string, unknown>;
  /**
   * Public base URL for `Link` headers (`'https://api.example.com'`); the request's path
   * and query are appended. Without it: `req.protocol` and `req.host` (`X-Forwarded-*`
   * only under the app's `trust proxy` setting).
   * @default the request's own URL
   */
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

type PageState = { readonly paginator: Paginator<never>; readonly plan: PagePlan; readonly url: string };

// In `res.locals`, Express's per-request store, under a symbol no user key can collide with.
const STATE = Symbol('keyset.pageState');
const slot = (res: Response): { [STATE]?: PageState } => res.locals as unknown as { [STATE]?: PageState };

/**
 * Middleware that plans this request's page and stores the plan as `res.locals.page`.
 * Bad `limit`, `offset` or `cursor` parameters are core's 400 `KeysetError`s, passed to
 * `next(error)` for `problemHandler()` to answer.
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
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function (query, req) => filters');
  const base = normalizeBaseUrl(baseUrl);
  // Express 5 passes a rejection to `next(error)`, as it does a throw.
  return async function paginate(req, res, next) {
    const url = publicUrl(req, base);
    const query = parseQueryString(url.search);
    const plan = await paginator.plan(query, filters === undefined ? {} : { filters: filters(query, req) });
    slot(res)[STATE] = { paginator: paginator as Paginator<never>, plan, url: url.href };
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
  const state = slot(res)[STATE];
  if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total, headers } = options;
  const { paginator, plan, url } = state;
  const page = await paginator.page(plan, rows as readonly never[], total === undefined ? { url } : { url, total });
  if (headers !== undefined) res.set(headers);
  res.set(page.headers);
  res.json(page.body);
}

/** The URL the client saw: the target on the base URL, or on `req.protocol` + `req.host` (core's Host rule). */
function publicUrl(req: Request, base: string | undefined): URL {
  // An absolute-form target (`GET http://h/p`) is reduced to its path and query.
  const target = req.originalUrl.replace(/^https?:\/\/[^/?#]*/i, '');
  const path = target.startsWith('/') ? target : target.startsWith('?') ? `/${target}` : '/';
  if (base !== undefined) return new URL(`${base}${path}`);
  if (req.protocol !== 'http' && req.protocol !== 'https') {
    throw new KeysetError('invalid_request', { detail: 'The forwarded protocol is neither http nor https.', extensions: { field: 'x-forwarded-proto' } });
  }
  return new URL(`${requestOrigin(req.protocol, req.host)}${path}`);
}
