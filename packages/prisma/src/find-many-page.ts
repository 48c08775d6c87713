/**
 * One page of a Prisma `findMany`: the user's arguments (`where`, `select`/`include`) with
 * the page's condition ANDed to their `where`, its `orderBy`, `take` and `skip`, from a
 * `PagePlan` of `@keyset/core`'s `createPaginator`.
 *
 * Rows come back with their timestamp and decimal sort fields as text, exact: what the
 * paginator writes into cursors and what a JSON client reads. Prisma returns a `DateTime`
 * as a JS `Date` (milliseconds) and sends one to the millisecond; on PostgreSQL, where a
 * `timestamptz(6)` column holds microseconds, the page's timestamps are read as text in
 * one raw query by primary key (`timestamps: { client, table }`), and a cursor with
 * microseconds is served by a condition widened to its millisecond whose extra rows,
 * always first in the page's order, are dropped by their exact values.
 * @module
 */
import { keysetWhere, type PagePlan, type SortKey, type SortSpec, type SortValue } from '@keyset/core';
import { assertKnownOptions, fetchSort, type KnownOptions } from '@keyset/core/adapter';
import type { Args, Decimal, Exact, Result } from '@prisma/client/runtime/client';
import { checkColumn, checkTable, readExactTimestamps, type RawQueryClient, type TimestampColumn } from './internal/exact-values.ts';
import { exactTimestamp } from './internal/exact-timestamp.ts';
import { keysetCondition, prismaOrderBy, type WhereInput } from './internal/keyset-condition.ts';
import { compareKeyValues } from './internal/sort-value-order.ts';

export type { RawQueryClient } from './internal/exact-values.ts';

/**
 * Where `findManyPage` reads a page's timestamp columns as text on PostgreSQL: the client
 * (`prisma`, or a transaction's client) and the model's table (`'orders'`, `'shop.orders'`).
 */
export interface TimestampReading<F extends string = string> {
  readonly client: RawQueryClient;
  readonly table: string;
  /**
   * Other `DateTime` fields to return exact, by field name with their column
   * (`{ updatedAt: 'updated_at' }`): read in the same query as the sort keys' columns.
   * @default {} (the timestamp sort fields only)
   */
  readonly fields?: Readonly<Record<F, string>>;
}

/** Options of {@link findManyPage}. */
export interface FindManyPageOptions<S extends readonly SortKey[], F extends string = never> {
  /** `plan.sort`, or a literal spec equal to it (then the result type knows which fields are text). */
  sort: S;
  /** The database behind the client's driver adapter. */
  dialect: 'postgres' | 'sqlite';
  /**
   * PostgreSQL with a `timestamp` sort key: where its values are read exactly. Required
   * there, whatever the column's precision (a page without it is refused, the first page
   * included): a JS `Date` cannot tell a `timestamptz(3)` from a `timestamptz(6)`. Refused
   * on SQLite, where Prisma stores a `DateTime` to the millisecond.
   */
  timestamps?: TimestampReading<F>;
}

/** Every name `FindManyPageOptions` knows, checked on each call. */
const OPTIONS = { sort: true, dialect: true, timestamps: { client: true, table: true, fields: true } } as const satisfies KnownOptions<FindManyPageOptions<readonly SortKey[], string>>;
/** `findMany` arguments that paging owns. */
const OWNED = ['orderBy', 'take', 'skip', 'cursor', 'distinct'] as const;
/** Rows fetched again, at most, when one is deleted or changed between the page and its timestamps. */
const ATTEMPTS = 5;
/**
 * Rows fetched beyond the page when the condition is widened to a millisecond: without
 * them a page whose cursor shares its millisecond with earlier rows takes a second
 * `findMany` and read (`pnpm bench prisma-page` measures both cursors).
 */
const WIDENED_EXTRA = 8;

type TextKey<S extends readonly SortKey[]> = Extract<S[number], { readonly type: 'timestamp' | 'decimal' }>['key'];

/**
 * A row of {@link findManyPage}: its timestamp and decimal sort fields, and the `DateTime`
 * fields `F` of `timestamps.fields`, as exact text (ISO 8601 in UTC with six fractional
 * digits; plain decimal notation). When `S` is a plain `SortSpec` the sort fields are not
 * known, and every other `Date` or `Decimal` field may be text.
 */
export type PageRow<R, S extends readonly SortKey[], F extends string = never> = string extends S[number]['key']
  ? { [P in keyof R]: P extends F ? Exclude<R[P], Date> | string : Extract<R[P], Date | Decimal> extends never ? R[P] : R[P] | string }
  : { [P in keyof R]: P extends TextKey<S> | F ? Exclude<R[P], Date | Decimal> | string : R[P] };

type Row = Record<string, unknown>;

/**
 * A model delegate of a generated Prisma Client (`prisma.order`): it carries Prisma's
 * operation types under a symbol, and its `fields`. (`fields` is what tells it apart: any
 * object type without symbol keys satisfies the symbol index signature alone.)
 */
export type PrismaDelegate = { readonly fields: object; [K: symbol]: { types: { payload: unknown } } };

/**
 * Runs `model.findMany` for the page `plan` describes and returns its rows in fetch order
 * (pass them to `Paginator.page` as they are: a backward page comes back reversed, and the
 * page flips it). `args` are your `findMany` arguments: `where` (ANDed with the page's
 * condition, never replaced), `select` (with every sort field: cursors are made of them),
 * `include`, `omit` (of no sort field), `relationLoadStrategy`; `orderBy`, `take`, `skip`,
 * `cursor` and `distinct` belong to the page and are refused.
 *
 * Sort keys name model fields (`key`); `column` (its last part) names the database column
 * for the timestamp read. Throws `ConfigError` for an unknown option, `TypeError` for a plan that does not fit `sort`, arguments
 * paging owns, or a PostgreSQL timestamp key without `timestamps`.
 *
 * @example
 * ```ts
 * const plan = await orders.plan(url.searchParams, { filters: { status } });
 * const rows = await findManyPage(prisma.order, plan, { where: { status }, select: { id: true, createdAt: true, amountCents: true } }, {
 *   sort: plan.sort,
 *   dialect: 'postgres',
 *   timestamps: { client: prisma, table: 'orders' },
 * });
 * const { body, headers } = await orders.page(plan, rows, { url });
 * ```
 */
export function findManyPage<T extends PrismaDelegate, A, const S extends readonly SortKey[], F extends string = never>(
  model: T,
  plan: PagePlan,
  args: Exact<A, Args<T, 'findMany'>>,
  options: FindManyPageOptions<S, F>,
): Promise<PageRow<Result<T, A, 'findMany'>[number], S, F>[]>;
/** Any object with a `findMany` (a Prisma Client extension's model, a test double): typed by its own signature. */
export function findManyPage<P, R, const S extends readonly SortKey[], F extends string = never>(
  model: { findMany(args: P): PromiseLike<readonly R[]> },
  plan: PagePlan,
  args: P,
  options: FindManyPageOptions<S, F>,
): Promise<PageRow<R, S, F>[]>;
export async function findManyPage(model: unknown, plan: PagePlan, args: unknown, options: FindManyPageOptions<readonly SortKey[], string>): Promise<Row[]> {
  assertKnownOptions('findManyPage', options, OPTIONS);
  const { sort, dialect, timestamps } = options;
  // keysetWhere checks the plan against the spec (and the spec itself) as every source does.
  const k = keysetWhere(plan, sort, dialect);
  const spec = fetchSort(plan, plan.sort);
  const user = (args ?? {}) as Row;
  for (const name of OWNED) if (user[name] !== undefined) throw new TypeError(`findManyPage: ${name} belongs to the page; leave it out of the findMany arguments`);
  const omit = user['omit'] as Row | undefined;
  const omitted = spec.find((key) => omit?.[key.key] === true);
  if (omitted !== undefined) throw new TypeError(`findManyPage: sort field ${omitted.key} is omitted; cursors are made of it`);
  if (dialect === 'sqlite' && timestamps !== undefined) {
    throw new TypeError('findManyPage: timestamps: { client, table } reads PostgreSQL columns; SQLite stores a Prisma DateTime to the millisecond and needs none');
  }
  if (dialect === 'postgres' && timestamps === undefined && spec.some((key) => key.type === 'timestamp')) {
    throw new TypeError(
      `findManyPage: sort key ${spec.find((key) => key.type === 'timestamp')!.key} is a timestamp, and Prisma reads PostgreSQL timestamps as JS Dates (milliseconds), ` +
        "which would skip or repeat rows sharing a millisecond: pass timestamps: { client: prisma, table: '<table>' } to read them to the microsecond",
    );
  }
  if (timestamps !== undefined) {
    checkTable(timestamps.table);
    for (const column of Object.values<string>(timestamps.fields ?? {})) checkColumn(column);
  }
  const reading = timestamps;

  const select = user['select'] as Row | undefined | null;
  const unselected = select === undefined || select === null ? undefined : spec.find((key) => select[key.key] !== true);
  if (unselected !== undefined) throw new TypeError(`findManyPage: select the sort field ${unselected.key} (select: { ${unselected.key}: true }); cursors are made of it`);
  const base: Row = { ...user, orderBy: prismaOrderBy(spec) };
  const userWhere = user['where'] as WhereInput | undefined;
  const and = (cond: WhereInput | null): WhereInput | undefined =>
    cond === null ? userWhere : userWhere === undefined ? cond : { AND: [userWhere, cond] };

  const findMany = (extra: Row): Promise<Row[]> => (model as unknown as { findMany(a: Row): PromiseLike<Row[]> }).findMany({ ...base, ...extra }) as Promise<Row[]>;
  const exact = async (rows: Row[]): Promise<Row[] | undefined> => exactRows(rows, spec, reading);

  if (k.offset > 0 || plan.mode === 'offset') {
    const where = and(null);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const rows = await exact(await findMany({ where, take: plan.take, skip: k.offset }));
      if (rows !== undefined) return rows;
    }
    throw unreadable();
  }
  const after = plan.after;
  const cond = after === null ? { where: null, widened: false } : keysetCondition(spec, after);
  const where = and(cond.where);
  // A widened condition also returns the rows sharing the cursor's millisecond at or before
  // it: fetching a few more up front usually saves the second round trip.
  let take = cond.widened ? plan.take + WIDENED_EXTRA : plan.take;
  for (let attempt = 0; attempt < ATTEMPTS; ) {
    const fetched = await findMany({ where, take });
    const rows = await exact(fetched);
    if (rows === undefined) {
      attempt++;
      continue;
    }
    if (!cond.widened || after === null) return rows;
    // Drop the rows at or before the cursor: they lead the page (see keyset-condition.ts).
    let dropped = 0;
    while (dropped < rows.length && comparePosition(spec, rows[dropped]!, after) <= 0) dropped++;
    const kept = rows.slice(dropped);
    if (kept.length >= plan.take || fetched.length < take) return kept.slice(0, plan.take);
    take = plan.take + dropped;
  }
  throw unreadable();
}

/**
 * The rows' timestamps did not match the page's `ATTEMPTS` times in a row: a write storm on
 * these rows is unlikely, a `timestamps.table` or `column` that is not the model's is not.
 */
function unreadable(): TypeError {
  return new TypeError(
    `findManyPage: the page's timestamps, read by primary key, did not match its rows ${ATTEMPTS} times: ` +
      "check that timestamps.table is the model's table and each sort key's column (the unique key's too) its database column",
  );
}

/** `row` against the cursor position `after`, in fetch order. */
function comparePosition(spec: SortSpec, row: Row, after: readonly SortValue[]): number {
  for (let i = 0; i < spec.length; i++) {
    const c = compareKeyValues(spec[i]!, row[spec[i]!.key] as SortValue | bigint, after[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * `rows` with timestamp and decimal sort fields (and `reading.fields`) as exact text;
 * `undefined` when a row was deleted, or a timestamp changed, between the page and the read.
 */
async function exactRows(rows: Row[], spec: SortSpec, reading: TimestampReading<string> | undefined): Promise<Row[] | undefined> {
  const unique = spec[spec.length - 1]!;
  const stamps: TimestampColumn[] = spec.filter((k) => k.type === 'timestamp').map((k) => ({ field: k.key, column: k.column ?? k.key }));
  for (const [field, column] of Object.entries<string>(reading?.fields ?? {})) if (!stamps.some((c) => c.field === field)) stamps.push({ field, column });
  const read = reading === undefined || rows.length === 0 || stamps.length === 0 ? undefined : await readExactTimestamps(reading.client, reading.table, unique, stamps, rows.map((r) => String(r[unique.key])));
  const out: Row[] = [];
  for (const row of rows) {
    const copy: Row = { ...row };
    for (const key of spec) {
      const value = row[key.key];
      if (key.type === 'decimal' && typeof value === 'object' && value !== null) copy[key.key] = (value as Decimal).toFixed();
    }
    const texts = read?.get(String(row[unique.key]));
    if (read !== undefined && texts === undefined) return undefined;
    for (const [i, { field }] of stamps.entries()) {
      const value = row[field];
      if (!(value instanceof Date)) {
        if (value === null && texts !== undefined && texts[i] !== null) return undefined;
        continue;
      }
      const text = texts === undefined ? value.toISOString() : texts[i];
      if (text === null || text === undefined || exactTimestamp(text).floor.getTime() !== value.getTime()) return undefined;
      copy[field] = exactTimestamp(text).iso;
    }
    out.push(copy);
  }
  return out;
}
