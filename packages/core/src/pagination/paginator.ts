/**
 * The page planner: one object per list endpoint that turns a query string into a
 * plan (what to fetch) and fetched rows into a response body plus `Link` header.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { toSortValue } from '../internal/sort-values.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { createFingerprintCache, scopePrefix } from './cursor-fingerprint.ts';
import { createLimitPolicy } from './limit-policy.ts';
import { parseWithModes, resolveModes } from './parse-page-query.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { CursorPage, CursorPosition, LimitPolicy, OffsetPage, PagePlan, PaginationMode, SortKey, SortSpec } from './types.ts';
import { ConfigError } from '../errors.ts';

/** Options of {@link createPaginator}. */
export interface PaginatorOptions {
  /** Names the collection in cursor fingerprints, e.g. `'GET /api/orders'`. */
  endpoint: string;
  /** Total order of the collection; validated as by `defineSortSpec`. */
  sort: readonly SortKey[];
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
  /** Rows matching the filters, when counted. Offset mode uses it for `total` and has-more. */
  total?: number;
}

/** A page ready to send: body and headers (`link` only when there is a next page). */
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
  /** `rows`: up to `plan.take` rows in sort order, as fetched for `plan`. */
  page(plan: PagePlan, rows: readonly Row[], options: PageOptions): Promise<PageResult<Row>>;
}

// Characters that may stand in a URI as they are (RFC 3986 unreserved, reserved, '%').
const URI_SAFE = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
// An absolute URL with an authority (`scheme://host…`); anything else takes the `URL`
// path, which throws a TypeError for a relative URL instead of emitting a relative Link.
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]/;

function paramName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The RFC 8288 `Link` to the next page: the request URL with only the position moved.
 * Other parameters (limit, filters) stay byte for byte as the client sent them. A plain
 * string edit, because re-serialising through `URL` costs more than the rest of the
 * page; URLs with characters that need escaping take the `URL` path instead.
 */
function nextLink(url: string | URL, name: 'cursor' | 'offset', value: string): string {
  const text = typeof url === 'string' ? url : url.href;
  if (!URI_SAFE.test(text) || !ABSOLUTE.test(text)) {
    const next = new URL(text);
    next.searchParams.delete(name === 'cursor' ? 'offset' : 'cursor');
    next.searchParams.set(name, value);
    next.hash = '';
    return `<${next.href}>; rel="next"`;
  }
  const hash = text.indexOf('#');
  const withoutHash = hash < 0 ? text : text.slice(0, hash);
  const q = withoutHash.indexOf('?');
  const other = name === 'cursor' ? 'offset' : 'cursor';
  // Cursor values are base64url and offsets digits: both safe in a query as they are.
  const position = `${name}=${value}`;
  const kept: string[] = [];
  let placed = false;
  if (q >= 0) {
    for (const part of withoutHash.slice(q + 1).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const key = paramName(eq < 0 ? part : part.slice(0, eq));
      if (key === other) continue;
      if (key !== name) kept.push(part);
      else if (!placed) {
        // Where the old position stood, like URLSearchParams#set.
        kept.push(position);
        placed = true;
      }
    }
  }
  if (!placed) kept.push(position);
  return `<${q < 0 ? withoutHash : withoutHash.slice(0, q)}?${kept.join('&')}>; rel="next"`;
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
  const { endpoint, sort: keys, limits: limitOptions = {}, cursor, crypto = defaultCrypto, clock } = options;
  if (typeof endpoint !== 'string' || endpoint === '') throw new ConfigError('endpoint must be a non-empty string naming the collection');
  const sort = defineSortSpec(keys);
  const limits = createLimitPolicy(limitOptions);
  const modeOptions = resolveModes(options);
  if (typeof cursor !== 'object' || cursor === null) throw new ConfigError('cursor: { secrets } is required');
  const codec = createCursorCodec({ ...cursor, crypto, ...(clock === undefined ? {} : { clock }) });
  const fingerprints = createFingerprintCache(crypto, scopePrefix(endpoint, sort));

  return Object.freeze({
    sort,
    limits: Object.freeze({ default: limits.default, max: limits.max, overMax: limits.overMax }),

    async plan(query: URLSearchParams, planOptions: PlanOptions = {}): Promise<PagePlan> {
      const parsed = parseWithModes(query, modeOptions);
      const limit = limits.resolve(parsed.limit);
      const memo = fingerprints.get(planOptions.filters);
      const fingerprint = typeof memo === 'string' ? memo : await memo;
      if (parsed.mode === 'offset') {
        return Object.freeze({ mode: 'offset', limit, take: limit + 1, offset: parsed.offset, fingerprint });
      }
      const after = parsed.cursor === null ? null : await codec.decode(parsed.cursor, fingerprint, sort);
      return Object.freeze({ mode: 'cursor', limit, take: limit + 1, after, fingerprint });
    },

    async page(plan: PagePlan, rows: readonly Row[], pageOptions: PageOptions): Promise<PageResult<Row>> {
      const { url, total } = pageOptions;
      // Has-more comes only from the extra row: a short page is not proof of the end.
      const hasMore = rows.length > plan.limit;
      const items = rows.slice(0, plan.limit);
      const headers: Record<string, string> = {};
      if (plan.mode === 'offset') {
        const hasNext = total === undefined ? hasMore : plan.offset + plan.limit < total;
        if (hasNext) headers.link = nextLink(url, 'offset', String(plan.offset + plan.limit));
        return { body: { items, total: total ?? null }, headers };
      }
      let nextCursor: string | null = null;
      if (hasMore) {
        const last = items[items.length - 1] as Record<string, unknown>;
        const position: CursorPosition = sort.map((k) => toSortValue(k, last[k.key]));
        nextCursor = await codec.encode(position, plan.fingerprint, sort);
        headers.link = nextLink(url, 'cursor', nextCursor);
      }
      return { body: { items, nextCursor }, headers };
    },
  });
}
