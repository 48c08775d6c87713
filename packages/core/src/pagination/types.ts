/**
 * Shapes shared by the pagination area: sort specs, cursor positions, page plans and
 * response envelopes.
 * @module
 */
/** Direction of one sort key. */
export type SortDirection = 'asc' | 'desc';

/**
 * How a sort value is typed, compared and carried in a cursor:
 * - `string`: JS string, compared by UTF-16 code unit (use a `"C"` collation in SQL to match);
 * - `int`: safe integer, a JSON number;
 * - `bigint`: any integer as decimal text (`bigint`, `number` or text accepted from rows);
 * - `decimal`: exact decimal text (`numeric`), `1.5` equals `1.50`;
 * - `number`: finite float;
 * - `timestamp`: text with up to microseconds (PostgreSQL or ISO 8601); a `Date` only for a
 *   key declared `precision: 'ms'` (a `Date` holds milliseconds, a column may hold more);
 * - `boolean`: `false` before `true`.
 */
export type SortValueType = 'string' | 'int' | 'bigint' | 'decimal' | 'number' | 'timestamp' | 'boolean';

/** One key of a sort spec. */
export interface SortKey {
  /** Property name on the row, and the default column name. */
  readonly key: string;
  /**
   * SQL column, optionally qualified (`o.created_at`); each part must match
   * `[A-Za-z_][A-Za-z0-9_]*` and is quoted as an identifier.
   * @default key
   */
  readonly column?: string;
  readonly dir: SortDirection;
  readonly type: SortValueType;
  /**
   * `false` for a NOT NULL key; otherwise where nulls go in the walk, whatever `dir` is
   * (SQL `NULLS FIRST` / `NULLS LAST`).
   * @default false
   */
  readonly nullable?: false | { readonly nulls: 'first' | 'last' };
  /** Whether the key alone identifies a row. Required `true` on the last key. */
  readonly unique?: boolean;
  /**
   * For a `timestamp` key: the finest unit its column holds. `'us'` (microseconds, as
   * PostgreSQL's `timestamptz` and MySQL's `DATETIME(6)` do) refuses a JS `Date` from a
   * row, which would carry milliseconds only and make the next page skip the rows in
   * between; `'ms'` declares a column that never holds finer values (`timestamptz(3)`,
   * `DATETIME(3)`, an in-memory array of `Date`s), so a `Date` is exact and accepted.
   * @default 'us'
   */
  readonly precision?: 'ms' | 'us';
}

/** A validated total order: see `defineSortSpec`. */
export type SortSpec = readonly SortKey[];

/**
 * A sort value as a cursor carries it: `bigint`, `decimal` and `timestamp` as text,
 * `int` and `number` as numbers, `null` only for nullable keys.
 */
export type SortValue = string | number | boolean | null;

/** The last row's sort values, one per sort key, in spec order. */
export type CursorPosition = readonly SortValue[];

/** Page-size policy of an endpoint. */
export interface LimitPolicy {
  /** Page size when the request has no `limit`. */
  readonly default: number;
  /** Largest page size served. */
  readonly max: number;
  /** A larger `limit` is refused with `limit_too_large`, or served as `max`. */
  readonly overMax: 'reject' | 'clamp';
  /**
   * Largest `offset` served; a larger one is refused with `offset_too_large` (never
   * clamped: that would serve another page than the one asked for). Absent or
   * `undefined`: no limit.
   */
  readonly maxOffset?: number | undefined;
}

/**
 * How an endpoint counts offset mode's `total` (the paginator's `total` option, resolved):
 * - `exact`: every matching row is counted; with a `cap`, counting stops after `cap` rows and
 *   a larger collection reports `total: cap` with `totalAtLeast: true`;
 * - `estimated`: the database's estimate, reported with `totalEstimated: true`;
 * - `none`: nothing is counted, `total: null`; has-more comes from the extra row.
 */
export type TotalPolicy =
  | { readonly mode: 'exact'; readonly cap: number | null }
  | { readonly mode: 'estimated' }
  | { readonly mode: 'none' };

/** Pagination mode of one request. */
export type PaginationMode = 'cursor' | 'offset';

/**
 * Which way a cursor page walks from its position: `'forward'` reads the rows after it
 * in the sort order (`nextCursor`), `'backward'` the rows before it (`prevCursor`).
 */
export type CursorDirection = 'forward' | 'backward';

/**
 * What to fetch: `take` (= `limit + 1`) rows, in **fetch order**, after `after` (cursor
 * mode) or from `offset` (offset mode).
 *
 * A backward cursor page is a forward page over the reversed sort: reverse every key's
 * direction and null placement (`reverseSortSpec`, or `fetchSort(plan, sort)`, which picks
 * the right one), fetch the `take` rows strictly after `after` in that order, and hand
 * them to `Paginator.page` as fetched: the page drops the extra row and flips the rest
 * back into sort order (`pageItems`). `keysetWhere` and `paginateArray` do all this.
 *
 * Sources use `plan.sort`, the order this page is in: the endpoint's default, or the one
 * the client chose with `?sort=`.
 */
export type PagePlan =
  | {
      readonly mode: 'cursor';
      readonly limit: number;
      readonly take: number;
      /** `'backward'` for a page reached through a `prevCursor`. */
      readonly direction: CursorDirection;
      /**
       * The position to fetch strictly after, in fetch order: the last row of the previous
       * page (forward) or the first row of the next page (backward). `null`: from the start
       * (forward: the first page) or from the end (backward: the last page).
       */
      readonly after: CursorPosition | null;
      /** The page's sort (validated, frozen). */
      readonly sort: SortSpec;
      readonly fingerprint: string;
      /** The filters bound into the cursor, when the paginator or `plan()` was given any. */
      readonly filters?: Readonly<Record<string, unknown>>;
    }
  | {
      readonly mode: 'offset';
      readonly limit: number;
      readonly take: number;
      readonly offset: number;
      /** The page's sort (validated, frozen). */
      readonly sort: SortSpec;
      readonly fingerprint: string;
      /** The filters bound into the cursor, when the paginator or `plan()` was given any. */
      readonly filters?: Readonly<Record<string, unknown>>;
      /**
       * How this endpoint counts `total` (`countTotal` runs it).
       * @default { mode: 'exact', cap: null } (plans built by hand)
       */
      readonly total?: TotalPolicy;
    };

/**
 * Cursor-mode body. `nextCursor` is `null` on the last page and `prevCursor` on the first
 * (a page reached without a cursor, or by walking back to the start); never `""`.
 * `items` are in the sort order in both directions.
 */
export interface CursorPage<Row> {
  items: Row[];
  nextCursor: string | null;
  prevCursor: string | null;
}

/**
 * Offset-mode body. `total` is `null` when the source did not count (the endpoint's total
 * mode is `none`). `totalEstimated: true` marks a database estimate, `totalAtLeast: true` a
 * capped count (the collection has at least `total` rows); both are absent on an exact total.
 */
export interface OffsetPage<Row> {
  items: Row[];
  total: number | null;
  totalEstimated?: true;
  totalAtLeast?: true;
}
