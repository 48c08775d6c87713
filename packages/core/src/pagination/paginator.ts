/**
 * The page planner: one object per list endpoint that turns a query string into a
 * plan (what to fetch) and fetched rows into a response body plus `Link` header.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { toSortValue } from '../internal/sort-values.ts';
import { createCursorCodec, type DecodedCursor } from './cursor-codec.ts';
import { createFingerprintCache, scopePrefix } from './cursor-fingerprint.ts';
import { createLimitPolicy } from './limit-policy.ts';
import { parseWithModes, resolveModes } from './parse-page-query.ts';
import { pageItems } from './page-items.ts';
import { pageLinks, type PageLinkTarget } from './page-links.ts';
import { createSortParam, type SortableField } from './sort-param.ts';
import { defineSortSpec } from './sort-spec.ts';
import { resolveTotalPolicy, settleTotal, type CountedTotal, type TotalOption } from './total-policy.ts';
import type { CursorDirection, CursorPage, CursorPosition, LimitPolicy, OffsetPage, PagePlan, PaginationMode, SortKey, SortSpec } from './types.ts';
import { ConfigError } from '../errors.ts';

/** Options of {@link createPaginator}. */
export interface PaginatorOptions {
  /** Names the collection in cursor fingerprints, e.g. `'GET /api/orders'`. */
  endpoint: string;
  /**
   * Total order of the collection (the default one when `sortable` is set); validated as
   * by `defineSortSpec`. Its last key is the unique tie-breaker.
   */
  sort: readonly SortKey[];
  /**
   * Fields a client may order by with `?sort=` (`sort=-createdAt`, `sort=amountCents,-id`):
   * the tie-breaker (the last key of `sort`) is appended when the client names no unique
   * field, in the direction of the last field given. Unknown, repeated or malformed fields
   * are a 400 `invalid_sort` naming the allowed fields. The chosen order is bound into the
   * cursor: a cursor used under another order is `invalid_cursor`.
   * @default undefined (the order is fixed and `?sort=` is ignored)
   */
  sortable?: readonly SortableField[];
  /**
   * Page sizes.
   * @default { default: 20, max: 100, overMax: 'reject' }
   */
  limits?: Partial<LimitPolicy>;
  /**
   * Mode when the query has neither `cursor` nor `offset`.
   * @default 'cursor'
   */
  defaultMode?: PaginationMode;
  /**
   * Modes the endpoint serves.
   * @default ['cursor', 'offset']
   */
  modes?: readonly PaginationMode[];
  /**
   * The endpoint's filters, parsed from the raw query (throw a `KeysetError`, e.g. 400
   * `invalid_request`, for a bad value). Declared here, they are bound into every cursor of
   * the endpoint whatever route serves it, and the plan carries them (`plan.filters`) to the
   * source. Filters passed to `plan()` (an adapter's `paginate({ filters })`) take precedence.
   * Return values in a canonical form (e.g. a sorted list) so equal filters share cursors.
   * @default no filters
   */
  filters?: (query: URLSearchParams) => Record<string, unknown>;
  /**
   * How offset mode counts `total`: `'exact'` (every matching row), `{ mode: 'exact', cap: N }`
   * (at most N rows; more is `total: N` with `totalAtLeast: true`), `'estimated'` (the
   * database's estimate, with `totalEstimated: true`) or `'none'` (`total: null`). The plan
   * carries it (`plan.total`); `countTotal(plan, counters)` runs the count it asks for.
   * @default 'exact'
   */
  total?: TotalOption;
  /** Cursor signing: see `CursorCodecOptions`. */
  cursor: { secrets: readonly (string | Uint8Array)[]; ttlSeconds?: number; maxLength?: number };
  /**
   * Cryptography provider.
   * @default the runtime's provider
   */
  crypto?: CryptoProvider;
  /**
   * Time source for cursor issue and expiry.
   * @default systemClock
   */
  clock?: Clock;
}

/** Options of `Paginator.plan`. */
export interface PlanOptions {
  /** The query's own filters (e.g. `{ status: 'paid' }`), bound into the cursor. */
  filters?: Record<string, unknown>;
}

/** Options of `Paginator.page`. */
export interface PageOptions {
  /** The absolute request URL; the `Link` header is built from it. */
  url: string | URL;
  /**
   * Rows matching the filters, when counted (`countTotal` gives it): a number is an exact
   * count. Offset mode reports it as `total` (reconciled with what the page proves: see
   * `settleTotal`); an exact total also decides has-more, any other the extra row.
   */
  total?: number | CountedTotal;
}

/**
 * A page ready to send: body and headers. `link` (RFC 8288) holds `rel="next"` when there
 * is a next page, and `rel="prev"` plus `rel="first"` when there is a previous one; it is
 * absent when there is neither.
 */
export interface PageResult<Row> {
  body: CursorPage<Row> | OffsetPage<Row>;
  headers: Record<string, string>;
}

/** Plans and renders the pages of one endpoint. */
export interface Paginator<Row> {
  readonly sort: SortSpec;
  readonly limits: LimitPolicy;
  /** Parses and validates the query; throws `KeysetError` (400) for bad input. */
  plan(query: URLSearchParams, options?: PlanOptions): Promise<PagePlan>;
  /**
   * `rows`: up to `plan.take` rows in fetch order, as fetched for `plan` (reversed sort for a
   * backward page, as `keysetWhere` and `paginateArray` return them).
   */
  page(plan: PagePlan, rows: readonly Row[], options: PageOptions): Promise<PageResult<Row>>;
}

/**
 * Creates the paginator of one endpoint. Throws `ConfigError` for a bad sort spec,
 * limit policy, mode list or cursor secret.
 *
 * @example
 * ```ts
 * const orders = createPaginator<Order>({
 *   endpoint: 'GET /api/orders',
 *   sort: [
 *     { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
 *     { key: 'id', dir: 'desc', type: 'bigint', unique: true },
 *   ],
 *   cursor: { secrets: [process.env.CURSOR_SECRET!] },
 * });
 * const plan = await orders.plan(url.searchParams, { filters: { status } });
 * const rows = await fetchOrders(plan); // e.g. with keysetWhere(plan, orders.sort, 'postgres')
 * const { body, headers } = await orders.page(plan, rows, { url });
 * ```
 */
export function createPaginator<Row>(options: PaginatorOptions): Paginator<Row> {
  const { endpoint, sort: keys, sortable, limits: limitOptions = {}, filters: parseFilters, total: totalOption, cursor, crypto = defaultCrypto, clock } = options;
  if (parseFilters !== undefined && typeof parseFilters !== 'function') throw new ConfigError('filters must be a function of the query (query: URLSearchParams) => filters');
  if (typeof endpoint !== 'string' || endpoint === '') throw new ConfigError('endpoint must be a non-empty string naming the collection');
  const sort = defineSortSpec(keys);
  const limits = createLimitPolicy(limitOptions);
  const totalPolicy = resolveTotalPolicy(totalOption);
  const modeOptions = resolveModes(options);
  if (typeof cursor !== 'object' || cursor === null) throw new ConfigError('cursor: { secrets } is required');
  const codec = createCursorCodec({ ...cursor, crypto, ...(clock === undefined ? {} : { clock }) });
  const sortParam = sortable === undefined ? undefined : createSortParam(sortable, sort);
  // One fingerprint cache per order: the fingerprint covers the sort, so a cursor issued
  // under one order is refused under another.
  const fingerprintCaches = new WeakMap<SortSpec, ReturnType<typeof createFingerprintCache>>();
  const fingerprintsFor = (spec: SortSpec): ReturnType<typeof createFingerprintCache> => {
    let cache = fingerprintCaches.get(spec);
    if (cache === undefined) {
      cache = createFingerprintCache(crypto, scopePrefix(endpoint, spec));
      fingerprintCaches.set(spec, cache);
    }
    return cache;
  };

  const startCursor = (plan: PagePlan): Promise<string> => codec.encode(null, plan.fingerprint, plan.sort, 'forward');

  /** Cursor for the walk from `row` (or from the start/end when `row` is undefined) in `direction`. */
  function cursorAt(row: Row | undefined, plan: PagePlan, direction: CursorDirection): Promise<string> {
    if (row === undefined) return codec.encode(null, plan.fingerprint, plan.sort, direction);
    const values = row as Record<string, unknown>;
    const position: CursorPosition = plan.sort.map((k) => toSortValue(k, values[k.key]));
    return codec.encode(position, plan.fingerprint, plan.sort, direction);
  }

  return Object.freeze({
    sort,
    limits: Object.freeze({ default: limits.default, max: limits.max, overMax: limits.overMax }),

    async plan(query: URLSearchParams, planOptions: PlanOptions = {}): Promise<PagePlan> {
      const given = planOptions.filters ?? parseFilters?.(query);
      const filters = given === undefined ? undefined : Object.freeze({ ...given });
      const parsed = parseWithModes(query, modeOptions);
      const limit = limits.resolve(parsed.limit);
      const spec = sortParam === undefined ? sort : sortParam.resolve(query);
      const memo = fingerprintsFor(spec).get(filters);
      const fingerprint = typeof memo === 'string' ? memo : await memo;
      const carried = filters === undefined ? {} : { filters };
      if (parsed.mode === 'offset') {
        return Object.freeze({ mode: 'offset', limit, take: limit + 1, offset: parsed.offset, sort: spec, fingerprint, total: totalPolicy, ...carried });
      }
      const cursor: DecodedCursor | null = parsed.cursor === null ? null : await codec.decode(parsed.cursor, fingerprint, spec);
      return Object.freeze({
        mode: 'cursor',
        limit,
        take: limit + 1,
        direction: cursor === null ? 'forward' : cursor.direction,
        after: cursor === null ? null : cursor.position,
        sort: spec,
        fingerprint,
        ...carried,
      });
    },

    async page(plan: PagePlan, rows: readonly Row[], pageOptions: PageOptions): Promise<PageResult<Row>> {
      const { url, total } = pageOptions;
      const { items, hasMore } = pageItems(plan, rows);
      const headers: Record<string, string> = {};
      const links: PageLinkTarget[] = [];
      if (plan.mode === 'offset') {
        const settled = settleTotal(plan.offset, items.length, hasMore, total);
        const exact = typeof total === 'number' ? total : total?.accuracy === 'exact' ? total.value : undefined;
        const hasNext = exact === undefined ? hasMore : plan.offset + plan.limit < exact;
        if (hasNext) links.push({ rel: 'next', name: 'offset', value: String(plan.offset + plan.limit) });
        if (plan.offset > 0) {
          links.push({ rel: 'prev', name: 'offset', value: String(Math.max(0, plan.offset - plan.limit)) });
          links.push({ rel: 'first', name: 'offset', value: '0' });
        }
        const link = pageLinks(url, links);
        if (link !== undefined) headers.link = link;
        return { body: { items, ...settled }, headers };
      }
      // In the walk's own direction the extra row decides. In the other direction, a page
      // reached from a position always has the rows it came from beyond it: the cursor
      // back is their way (an empty page, whose rows were deleted meanwhile, points to the
      // edge it is nearest to: the last page, or the first).
      let nextCursor: string | null = null;
      let prevCursor: string | null = null;
      const first = items[0];
      const last = items[items.length - 1];
      if (plan.direction === 'forward') {
        if (hasMore) nextCursor = await cursorAt(last, plan, 'forward');
        if (plan.after !== null) prevCursor = await cursorAt(first, plan, 'backward');
      } else {
        if (hasMore) prevCursor = await cursorAt(first, plan, 'backward');
        if (plan.after !== null) nextCursor = await cursorAt(last, plan, 'forward');
      }
      if (nextCursor !== null) links.push({ rel: 'next', name: 'cursor', value: nextCursor });
      if (prevCursor !== null) {
        links.push({ rel: 'prev', name: 'cursor', value: prevCursor });
        // The first page is the URL without a cursor, unless that means offset mode here.
        const start = modeOptions.defaultMode === 'cursor' ? null : await startCursor(plan);
        links.push({ rel: 'first', name: 'cursor', value: start });
      }
      const link = pageLinks(url, links);
      if (link !== undefined) headers.link = link;
      return { body: { items, nextCursor, prevCursor }, headers };
    },
  });
}
