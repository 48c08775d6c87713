/**
 * The page planner: one object per list endpoint that turns a query string into a
 * plan (what to fetch) and fetched rows into a response body plus `Link` header.
 * @module
 */
import type { Clock } from '../clock.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { compareKey, rowPosition, toComparable, withoutSortValues } from '../internal/sort-values.ts';
import { createPaginatorCursorCodec } from '../cursor/cursor-codec.ts';
import { createFingerprintCache, scopePrefix } from '../cursor/cursor-fingerprint.ts';
import { LIMIT_OPTIONS, createLimitPolicy, parseWithModes, resolveModes } from './page-query.ts';
import { keptParams, pageLinks, type KeepParam, type PageLinkTarget } from './page-links.ts';
import { SORTABLE_FIELD_OPTIONS, createSortParam, type SortableField } from './sort-param.ts';
import { SORT_KEY_OPTIONS, defineSortSpec } from './sort-spec.ts';
import { resolveTotalPolicy, settleTotal, type CountedTotal, type TotalOption } from './total-policy.ts';
import type { CursorDirection, CursorPage, CursorPosition, LimitPolicy, OffsetPage, PagePlan, PaginationMode, SortKey, SortSpec, SortValue } from './types.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';

const NO_PLAN_OPTIONS: PlanOptions = Object.freeze({});

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
   * Page sizes, and the largest offset served (`maxOffset`, absent by default: any offset).
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
   * Query parameters the `Link` header keeps on every page besides the ones keyset reads
   * (`limit`, `sort` when `sortable` is set, the position, and the plan's filters by their
   * names): parameters such as `expand` or `fields` that your handler reads and keyset does
   * not. Every other parameter a client sends is left out of the links, so no client text
   * but what the endpoint declared is sent back. A filter whose name in the filters object
   * is not its query parameter's name belongs here too.
   * @default []
   */
  keepParams?: readonly string[];
  /**
   * How offset mode counts `total`: `'exact'` (every matching row), `{ mode: 'exact', cap: N }`
   * (at most N rows; more is `total: N` with `totalAtLeast: true`), `'estimated'` (the
   * database's estimate, with `totalEstimated: true`) or `'none'` (`total: null`). The plan
   * carries it (`plan.total`); `countTotal(plan, counters)` runs the count it asks for.
   * @default 'exact'
   */
  total?: TotalOption;
  /** Cursor signing: see `CursorCodecOptions`. */
  cursor: { secrets: readonly (string | Uint8Array)[]; ttlSeconds?: number; clockSkewSeconds?: number; maxLength?: number };
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

/** Every name `PaginatorOptions` knows, checked when the paginator is made. */
const PAGINATOR_OPTIONS = {
  endpoint: true,
  sort: SORT_KEY_OPTIONS,
  sortable: SORTABLE_FIELD_OPTIONS,
  limits: LIMIT_OPTIONS,
  defaultMode: true,
  modes: true,
  filters: true,
  keepParams: true,
  total: { mode: true, cap: true },
  cursor: { secrets: true, ttlSeconds: true, clockSkewSeconds: true, maxLength: true },
  crypto: true,
  clock: true,
} as const satisfies KnownOptions<PaginatorOptions>;

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

/**
 * The arguments of a Relay connection field (GraphQL Cursor Connections): `first` rows
 * after `after`, and/or `last` rows before `before`. `null` and `undefined` mean absent.
 */
export interface SliceArgs {
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}

/**
 * A cursor plan for a slice (`Paginator.planSlice`): any cursor-plan source fetches it
 * (`keysetWhere`, `keysetPage`, `paginateArray`), then `Paginator.slice` cuts the edges.
 * `direction` is `'backward'` when only `last` is given; `after` is where the fetch
 * starts (the `before` cursor's position for a backward fetch). `slice` holds what the
 * fetch does not: the requested counts and the other cursor's position (`until`), the
 * bound the rows are cut at.
 */
export type SlicePlan = Extract<PagePlan, { mode: 'cursor' }> & {
  readonly slice: { readonly first: number | null; readonly last: number | null; readonly until: CursorPosition | null };
};

/**
 * The edges of a slice, in the sort order whichever way it was fetched, each with its
 * own cursor (usable as `after` and as `before`). `hasNext` and `hasPrevious` are as the
 * Relay specification's algorithm states them: `hasNext` is whether more than `first` rows
 * lie between the cursors (`false` when `first` was not given), `hasPrevious` whether more
 * than `last` do (`false` when `last` was not given).
 */
export interface SliceResult<Row> {
  items: Row[];
  cursors: string[];
  hasNext: boolean;
  hasPrevious: boolean;
}

/** Plans and renders the pages of one endpoint. */
export interface Paginator<Row> {
  readonly sort: SortSpec;
  readonly limits: LimitPolicy;
  /** Parses and validates the query; throws `KeysetError` (400) for bad input. */
  plan(query: URLSearchParams, options?: PlanOptions): Promise<PagePlan>;
  /**
   * `rows`: up to `plan.take` rows in fetch order, as fetched for `plan` (reversed sort for a
   * backward page, as `keysetWhere` and `paginateArray` return them). Cursors are made from
   * a row's `keysetSortValues` where a query helper attached them, else from its own
   * properties; a value there that may have lost precision (a `Date` for a `timestamp` key
   * not declared `precision: 'ms'`, a number past 2^53 for a `bigint` key, a number for a
   * `decimal` key) throws `ConfigError` naming the setting to change.
   */
  page(plan: PagePlan, rows: readonly Row[], options: PageOptions): Promise<PageResult<Row>>;
  /**
   * Plans a slice from Relay connection arguments, in the endpoint's default sort:
   * `first` (with `after`, `before` or both) fetches forward, `last` alone backward; both
   * `first` and `last` fetch forward and keep the last `last` of the first `first` rows;
   * neither means `first` = the default page size. Counts go through the limit policy
   * (a negative or non-integer count is 400 `invalid_limit`, one over the maximum
   * `limit_too_large` or clamped; `0` is served); a cursor of another endpoint, sort or
   * filters, expired or tampered with is 400 `invalid_cursor`. The filters bound into the
   * cursors are `options.filters` (the paginator's `filters` parses a query string, which a
   * connection does not have).
   */
  planSlice(args: SliceArgs, options?: PlanOptions): Promise<SlicePlan>;
  /**
   * `rows`: up to `plan.take` rows in fetch order, as fetched for `plan`. Cuts them at the
   * plan's other cursor and counts, and makes every row's cursor (read as `page()` does).
   */
  slice(plan: SlicePlan, rows: readonly Row[]): Promise<SliceResult<Row>>;
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
 *   cursor: { secrets: cursorSecrets(process.env.CURSOR_SECRET) },
 * });
 * const plan = await orders.plan(url.searchParams, { filters: { status } });
 * const rows = await fetchOrders(plan); // e.g. with keysetWhere(plan, orders.sort, 'postgres')
 * const { body, headers } = await orders.page(plan, rows, { url });
 * ```
 */
export function createPaginator<Row>(options: PaginatorOptions): Paginator<Row> {
  assertKnownOptions('createPaginator', options, PAGINATOR_OPTIONS);
  const { endpoint, sort: keys, sortable, limits: limitOptions = {}, filters: parseFilters, keepParams = [], total: totalOption, cursor, crypto = defaultCrypto, clock } = options;
  if (parseFilters !== undefined && typeof parseFilters !== 'function') throw new ConfigError('filters must be a function of the query (query: URLSearchParams) => filters');
  if (typeof endpoint !== 'string' || endpoint === '') throw new ConfigError('endpoint must be a non-empty string naming the collection');
  const sort = defineSortSpec(keys);
  const limits = createLimitPolicy(limitOptions);
  const totalPolicy = resolveTotalPolicy(totalOption);
  const modeOptions = resolveModes(options);
  if (typeof cursor !== 'object' || cursor === null) throw new ConfigError('cursor: { secrets } is required');
  const codec = createPaginatorCursorCodec({ ...cursor, crypto, ...(clock === undefined ? {} : { clock }) });
  const sortParam = sortable === undefined ? undefined : createSortParam(sortable, sort);
  const keptNames = keptParams(keepParams, sortParam !== undefined);
  // The names a page's links keep: the endpoint's own, and the plan's filters.
  const keepFor = (plan: PagePlan): KeepParam => {
    const filters = plan.filters;
    return filters === undefined ? (name) => keptNames.has(name) : (name) => keptNames.has(name) || Object.hasOwn(filters, name);
  };
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
  // Specs whose `toSortValue` output can still fail the cursor check (bigint and decimal
  // text past 400 characters); every other cursor value `toSortValue` returns is one.
  const recheckedSpecs = new WeakMap<SortSpec, boolean>();
  const needsRecheck = (spec: SortSpec): boolean => {
    let needs = recheckedSpecs.get(spec);
    if (needs === undefined) {
      needs = spec.some((k) => k.type === 'bigint' || k.type === 'decimal');
      recheckedSpecs.set(spec, needs);
    }
    return needs;
  };

  const startCursor = (plan: PagePlan): string | Promise<string> => codec.encodeChecked(null, plan.fingerprint, 'forward');

  /** Cursor for the walk from `row` (or from the start/end when `row` is undefined) in `direction`. */
  function cursorAt(row: Row | undefined, plan: PagePlan, direction: CursorDirection): string | Promise<string> {
    if (row === undefined) return codec.encodeChecked(null, plan.fingerprint, direction);
    const spec = plan.sort;
    // Each value read and checked once, by toSortValue; not parsed again to sign it.
    const position = rowPosition(row as Record<string, unknown>, spec);
    if (needsRecheck(spec)) return codec.encode(position, plan.fingerprint, spec, direction);
    return codec.encodeChecked(position, plan.fingerprint, direction);
  }

  async function plan(query: URLSearchParams, planOptions: PlanOptions = NO_PLAN_OPTIONS): Promise<PagePlan> {
    const given = planOptions.filters ?? parseFilters?.(query);
    const filters = given === undefined ? undefined : frozenFilters(given);
    const parsed = parseWithModes(query, modeOptions);
    const limit = limits.resolve(parsed.limit);
    const spec = sortParam === undefined ? sort : sortParam.resolve(query);
    const known = fingerprintsFor(spec).get(filters);
    const fingerprint = typeof known === 'string' ? known : await known;
    if (parsed.mode === 'offset') {
      // Literals, not a spread: a spread object's shape has no frozen twin to move to, and
      // freezing it makes a new hidden class per call.
      const offset = limits.resolveOffset(parsed.offset);
      return Object.freeze(
        filters === undefined
          ? { mode: 'offset', limit, take: limit + 1, offset, sort: spec, fingerprint, total: totalPolicy }
          : { mode: 'offset', limit, take: limit + 1, offset, sort: spec, fingerprint, total: totalPolicy, filters },
      );
    }
    const cursor = parsed.cursor === null ? null : await codec.decode(parsed.cursor, fingerprint, spec);
    const direction = cursor === null ? 'forward' : cursor.direction;
    const after = cursor === null ? null : cursor.position;
    // Two literals rather than a spread (see the offset plan above).
    return Object.freeze(
      filters === undefined
        ? { mode: 'cursor', limit, take: limit + 1, direction, after, sort: spec, fingerprint }
        : { mode: 'cursor', limit, take: limit + 1, direction, after, sort: spec, fingerprint, filters },
    );
  }

  async function page(plan: PagePlan, rows: readonly Row[], pageOptions: PageOptions): Promise<PageResult<Row>> {
    const { url, total } = pageOptions;
    const { items, hasMore } = pageItems(plan, rows);
    if (plan.mode === 'offset') {
      const headers: Record<string, string> = {};
      const links: PageLinkTarget[] = [];
      const settled = settleTotal(plan.offset, items.length, hasMore, total);
      const exact = typeof total === 'number' ? total : total?.accuracy === 'exact' ? total.value : undefined;
      const hasNext = exact === undefined ? hasMore : plan.offset + plan.limit < exact;
      if (hasNext) links.push({ rel: 'next', name: 'offset', value: String(plan.offset + plan.limit) });
      if (plan.offset > 0) {
        links.push({ rel: 'prev', name: 'offset', value: String(Math.max(0, plan.offset - plan.limit)) });
        links.push({ rel: 'first', name: 'offset', value: '0' });
      }
      const link = pageLinks(url, links, keepFor(plan));
      if (link !== undefined) headers.link = link;
      return { body: { items: withoutSortValues(items), ...settled }, headers };
    }
    // In the walk's own direction the extra row decides. In the other direction, a page
    // reached from a position always has the rows it came from beyond it: the cursor
    // back is their way (an empty page, whose rows were deleted meanwhile, points to the
    // edge it is nearest to: the last page, or the first).
    const first = items[0];
    const last = items[items.length - 1];
    // Each cursor is a string, or a promise of one where the provider's MAC waits (Web Crypto).
    let next: string | Promise<string> | null = null;
    let prev: string | Promise<string> | null = null;
    if (plan.direction === 'forward') {
      if (hasMore) next = cursorAt(last, plan, 'forward');
      if (plan.after !== null) prev = cursorAt(first, plan, 'backward');
    } else {
      if (hasMore) prev = cursorAt(first, plan, 'backward');
      if (plan.after !== null) next = cursorAt(last, plan, 'forward');
    }
    // The first page is the URL without a cursor, unless that means offset mode here.
    const start = prev === null || modeOptions.defaultMode === 'cursor' ? null : startCursor(plan);
    // Only a promise is awaited: awaiting a string or null would cost a turn for nothing.
    const nextCursor = next instanceof Promise ? await next : next;
    const prevCursor = prev instanceof Promise ? await prev : prev;
    const firstCursor = start instanceof Promise ? await start : start;
    const headers: Record<string, string> = {};
    const links: PageLinkTarget[] = [];
    if (nextCursor !== null) links.push({ rel: 'next', name: 'cursor', value: nextCursor });
    if (prevCursor !== null) {
      links.push({ rel: 'prev', name: 'cursor', value: prevCursor });
      links.push({ rel: 'first', name: 'cursor', value: firstCursor });
    }
    const link = pageLinks(url, links, keepFor(plan));
    if (link !== undefined) headers.link = link;
    return { body: { items: withoutSortValues(items), nextCursor, prevCursor }, headers };
  }

  /** A Relay count: absent, or a non-negative integer resolved through the limit policy. */
  const sliceCount = (name: 'first' | 'last', value: number | null | undefined): number | null => {
    if (value === null || value === undefined) return null;
    if (!Number.isSafeInteger(value) || value < 0) throw new KeysetError('invalid_limit', { detail: `\`${name}\` must be a non-negative integer, got ${String(value)}` });
    return value === 0 ? 0 : limits.resolve(value);
  };

  /** The position a slice cursor names; a start or end cursor names none and is no edge's. */
  const slicePosition = async (name: 'after' | 'before', text: string | null | undefined, fingerprint: string): Promise<CursorPosition | null> => {
    if (text === null || text === undefined) return null;
    if (typeof text !== 'string' || text === '') throw new KeysetError('invalid_cursor', { detail: `\`${name}\` must be a cursor of this connection` });
    const { position } = await codec.decode(text, fingerprint, sort);
    if (position === null) throw new KeysetError('invalid_cursor', { detail: `\`${name}\` must be an edge's cursor of this connection` });
    return position;
  };

  async function planSlice(args: SliceArgs, planOptions: PlanOptions = NO_PLAN_OPTIONS): Promise<SlicePlan> {
    // A connection has no query string: its filters are the field's arguments, given here.
    const filters = planOptions.filters === undefined ? undefined : frozenFilters(planOptions.filters);
    const lastCount = sliceCount('last', args.last);
    const firstCount = sliceCount('first', args.first) ?? (lastCount === null ? limits.default : null);
    const known = fingerprintsFor(sort).get(filters);
    const fingerprint = typeof known === 'string' ? known : await known;
    const after = await slicePosition('after', args.after, fingerprint);
    const before = await slicePosition('before', args.before, fingerprint);
    const backward = firstCount === null;
    // Both counts: the forward fetch must hold `last` + 1 rows too, to tell hasPrevious.
    const limit = Math.max(firstCount ?? 0, lastCount ?? 0);
    const slice = Object.freeze({ first: firstCount, last: lastCount, until: backward ? after : before });
    const base = { mode: 'cursor', limit, take: limit + 1, direction: backward ? 'backward' : 'forward', after: backward ? before : after, sort, fingerprint, slice } as const;
    return Object.freeze(filters === undefined ? base : { ...base, filters });
  }

  async function slice(plan: SlicePlan, rows: readonly Row[]): Promise<SliceResult<Row>> {
    const spec = plan.sort;
    const { first, last, until } = plan.slice;
    const backward = plan.direction === 'backward';
    const bound = until === null ? null : spec.map((key, i) => toComparable(key.type, until[i] as SortValue));
    // Rows in fetch order up to the other cursor (exclusive), with their positions.
    const kept: Row[] = [];
    const positions: SortValue[][] = [];
    for (const row of rows.slice(0, plan.take)) {
      const position = rowPosition(row as Record<string, unknown>, spec);
      if (bound !== null) {
        let c = 0;
        for (let i = 0; i < spec.length && c === 0; i++) c = compareKey(spec[i] as SortKey, toComparable((spec[i] as SortKey).type, position[i] as SortValue), bound[i] as ReturnType<typeof toComparable>);
        if (backward ? c <= 0 : c >= 0) break;
      }
      kept.push(row);
      positions.push(position);
    }
    let items: Row[];
    let itemPositions: SortValue[][];
    let hasNext = false;
    let hasPrevious = false;
    if (backward) {
      hasPrevious = kept.length > (last as number);
      items = kept.slice(0, last as number).reverse();
      itemPositions = positions.slice(0, last as number).reverse();
    } else {
      hasNext = kept.length > (first as number);
      items = kept.slice(0, first as number);
      itemPositions = positions.slice(0, first as number);
      if (last !== null) {
        hasPrevious = kept.length > last;
        const from = Math.max(0, items.length - last);
        items = items.slice(from);
        itemPositions = itemPositions.slice(from);
      }
    }
    const recheck = needsRecheck(spec);
    const pending = itemPositions.map((position) => (recheck ? codec.encode(position, plan.fingerprint, spec, 'forward') : codec.encodeChecked(position, plan.fingerprint, 'forward')));
    const cursors = pending.some((c) => c instanceof Promise) ? await Promise.all(pending) : (pending as string[]);
    return { items: withoutSortValues(items), cursors, hasNext, hasPrevious };
  }

  return Object.freeze({
    sort,
    limits: limits.policy,

    plan,
    page,
    planSlice,
    slice,
  });
}

/**
 * From fetched rows to a page's items: the one place that drops the extra row and puts a
 * backward page back into sort order, so every source (memory, SQL, query builders)
 * agrees on what a page holds.
 *
 * The page's `items` (in sort order) and whether the walk's direction has more rows,
 * from up to `plan.take` rows in fetch order. Has-more comes only from the extra row:
 * a short page is not proof of the end. `Paginator.page` calls it for you.
 *
 * @example
 * ```ts
 * const { items, hasMore } = pageItems(plan, rows); // rows as keysetWhere's ORDER BY returned them
 * ```
 */
export function pageItems<Row>(plan: PagePlan, rows: readonly Row[]): { items: Row[]; hasMore: boolean } {
  const hasMore = rows.length > plan.limit;
  const items = rows.slice(0, plan.limit);
  if (plan.mode === 'cursor' && plan.direction === 'backward') items.reverse();
  return { items, hasMore };
}

/**
 * `Object.freeze({ ...given })`, made faster for the filters every request brings. The
 * own enumerable string keys are copied by plain stores into a fresh object, which V8
 * freezes along a cached map transition; an object made by spread has a map with no
 * frozen twin, and freezing it makes a new one on every request. A store is not a
 * spread's define for a key the prototype holds (`__proto__`'s setter, an accessor added
 * to `Object.prototype`), and a spread also copies symbol keys: such filters, and values
 * that are not objects, still take the spread, checked before any value is read so no
 * getter runs twice. The plan's frozen copy of the query's filters. Internal: not exported
 * from the package.
 */
export function frozenFilters(given: Record<string, unknown>): Readonly<Record<string, unknown>> {
  if (typeof given !== 'object' || given === null) return Object.freeze({ ...(given as object) }) as Readonly<Record<string, unknown>>;
  // Every own string key, as a spread lists them before reading any: each is copied only if
  // it is still an own enumerable member when its turn comes (a getter read earlier may
  // have deleted it, or changed whether it is enumerable), as a spread checks.
  const keys = Object.getOwnPropertyNames(given);
  for (let i = 0; i < keys.length; i++) if ((keys[i] as string) in OBJECT_PROTOTYPE) return Object.freeze({ ...given });
  if (Object.getOwnPropertySymbols(given).length !== 0) return Object.freeze({ ...given });
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (isEnumerable.call(given, key)) copy[key] = given[key];
  }
  return Object.freeze(copy);
}

const OBJECT_PROTOTYPE: object = Object.prototype;
const isEnumerable = Object.prototype.propertyIsEnumerable;
