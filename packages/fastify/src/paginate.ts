/**
 * `paginate()` plans the page from the raw query string (`request.raw.url`, never
 * Fastify's parsed `request.query`); `reply.sendPage()` / `sendPage()` sends it with its
 * `Link` header (RFC 8288). Every decision (mode, limits, cursor checks) is the core's.
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { assertKnownOptions, hostError, type KnownOptions, maybeSyncVariant, normalizeBaseUrl, parseQueryString } from '@keyset/core/adapter';
import type { CountedTotal, PagePlan, Paginator } from '@keyset/core';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { targetOf } from './check-request.ts';

/** Options of `paginate()`. */
export interface PaginateOptions {
  /**
   * The request's filters (e.g. `{ status: 'paid' }`), bound into the cursor so a cursor
   * cannot be replayed against another filter. Read them from `query`, the raw query
   * string: `request.query` is Fastify's parse, which turns repeated parameters into arrays.
   * @default no filters
   */
  filters?: (request: FastifyRequest, query: URLSearchParams) => Record<string, unknown>;
  /**
   * Public base URL for `Link` headers, e.g. `'https://api.example.com'`; the request's
   * path and query are appended. Without it the URL comes from `request.protocol` and
   * `request.host`, which trust `X-Forwarded-*` only under Fastify's `trustProxy`.
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

/**
 * A Fastify hook (`preHandler`, or `onRequest`) that plans the page. Fastify calls it with
 * `done`, so it finishes without a promise (no microtask hop) when the plan is ready
 * synchronously; called with two arguments, it returns a promise.
 */
export interface PaginateHook {
  (request: FastifyRequest, reply: FastifyReply): Promise<void>;
  (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void;
}

interface PageState {
  readonly paginator: Paginator<never>;
  readonly plan: PagePlan;
  readonly url: string;
}

// On the request itself (a symbol-keyed property), not in a WeakMap keyed by it: a
// WeakMap entry per request is an ephemeron every scavenge must trace.
const STATE = Symbol('keyset.pageState');
const slot = (request: FastifyRequest): { [STATE]?: PageState } => request as unknown as { [STATE]?: PageState };

/**
 * A hook that plans this request's page and stores the plan as `request.page`.
 * Bad `limit`, `offset` or `cursor` parameters throw the core's 400 problems.
 *
 * @example
 * ```ts
 * app.get('/orders', { preHandler: paginate(orders) }, async (request, reply) => {
 *   const { rows, total } = paginateArray(allOrders, request.page, orders.sort);
 *   return reply.sendPage(rows, { total });
 * });
 * ```
 */
export function paginate<Row>(paginator: Paginator<Row>, options: PaginateOptions = {}): PaginateHook {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const { filters, baseUrl } = options;
  if (typeof paginator?.plan !== 'function' || typeof paginator.page !== 'function') {
    throw new ConfigError('paginate() needs a paginator: pass createPaginator({ endpoint, sort, cursor })');
  }
  if (filters !== undefined && typeof filters !== 'function') throw new ConfigError('paginate() filters must be a function');
  const base = normalizeBaseUrl(baseUrl);
  const planOf = (request: FastifyRequest): { url: URL; planned: PagePlan | Promise<PagePlan> } => {
    const url = publicUrl(request, base);
    // The URL's query as the core reads it, split without URLSearchParams' per-character parser when nothing needs decoding.
    const query = parseQueryString(url.search);
    const planOptions = filters === undefined ? {} : { filters: filters(request, query) };
    // The paginator's synchronous twin when it has one (a synchronous crypto provider): no promise to wait for.
    const fast = maybeSyncVariant(paginator.plan);
    // A native Promise when the plan has to wait (see apiKey()), told apart with `instanceof Promise`.
    return { url, planned: fast !== undefined ? fast(query, planOptions) : Promise.resolve(paginator.plan(query, planOptions)) };
  };
  const keep = (request: FastifyRequest, url: URL, plan: PagePlan): void => {
    slot(request)[STATE] = { paginator: paginator as Paginator<never>, plan, url: url.href };
    request.page = plan;
  };
  // Not `async`: Fastify passes `done`, and a synchronous plan then costs no promise. A
  // throw reaches Fastify's error handler either way (its hook runner catches it, as it
  // does a rejection).
  function paginate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  function paginate(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void;
  function paginate(request: FastifyRequest, _reply: FastifyReply, done?: HookHandlerDoneFunction): Promise<void> | void {
    if (typeof done !== 'function') {
      // Called by hand (`await hook(request, reply)`): a promise, as an async hook gives.
      try {
        const { url, planned } = planOf(request);
        return planned instanceof Promise ? planned.then((plan) => keep(request, url, plan)) : Promise.resolve(keep(request, url, planned));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const { url, planned } = planOf(request);
    // Waiting: the promise goes back to Fastify, which treats it as an async hook's (a
    // rejection without a reason still stops the request); `done(undefined)` would go on.
    if (planned instanceof Promise) return planned.then((plan) => keep(request, url, plan));
    keep(request, url, planned);
    done();
  }
  return paginate;
}

/**
 * Sends `rows` (fetched with `request.page`) as the page envelope, with a `Link` header
 * when there is a next page. `reply.sendPage(rows, options)` is the same call.
 *
 * @example
 * ```ts
 * return sendPage(reply, rows, { total });
 * ```
 */
export async function sendPage<Row>(reply: FastifyReply, rows: readonly Row[], options: SendPageOptions = {}): Promise<FastifyReply> {
  const state = slot(reply.request)[STATE];
  if (state === undefined) throw new Error('sendPage() needs paginate() earlier in this route');
  const { total } = options;
  const { paginator, plan, url } = state;
  const pageOptions = total === undefined ? { url } : { url, total };
  const fast = maybeSyncVariant(paginator.page);
  const page = fast !== undefined ? fast(plan, rows as readonly never[], pageOptions) : paginator.page(plan, rows as readonly never[], pageOptions);
  const { body, headers } = fast === undefined || page instanceof Promise ? await page : page;
  return reply.headers(headers).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * The absolute URL as the client saw it: the request target on a configured public base
 * URL, or on `request.protocol` and `request.host`, which follow Fastify's `trustProxy`
 * (`X-Forwarded-Proto`/`-Host`). Throws 400 `invalid_request` (`field: 'host'`) when that
 * host is none (core's `hostError`).
 */
function publicUrl(request: FastifyRequest, base: string | undefined): URL {
  const target = originForm(targetOf(request));
  if (base !== undefined) return new URL(`${base}${target}`);
  const { protocol, host } = request;
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
