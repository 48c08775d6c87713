/**
 * The `where` and `orderBy` of one keyset page in Prisma's own terms: the OR-expansion of
 * "strictly after the cursor" (Prisma's `where` has no row values), ANDed with a range
 * bound on the leading key, NULLs where the sort spec puts them.
 *
 * Prisma sends a timestamp to the millisecond. A cursor timestamp with microseconds past
 * its millisecond cannot be compared exactly, so the condition stops at the first such key
 * and asks for the rows at or after its millisecond instead: a superset of the rows after
 * the cursor that differs from them only by rows that tie with the cursor on the keys
 * before, fall in that millisecond and sort at or before the cursor. In the page's order
 * those rows come first; `findManyPage` reads their exact values and drops them.
 * @module
 */
import type { SortKey, SortSpec, SortValue } from '@keyset/core';
import { exactTimestamp } from './exact-timestamp.ts';

const ALL = Symbol('every non-null row');

/** A Prisma `where` object. */
export type WhereInput = Record<string, unknown>;

/** The page's condition; `widened` when it includes rows up to the cursor (see the module comment). */
export interface KeysetCondition {
  where: WhereInput | null;
  widened: boolean;
}

/** One `orderBy` entry per key, in fetch order: `{ createdAt: 'desc' }`, `{ label: { sort: 'asc', nulls: 'last' } }`. */
export function prismaOrderBy(spec: SortSpec): WhereInput[] {
  return spec.map((k) => ({ [k.key]: k.nullable ? { sort: k.dir, nulls: k.nullable.nulls } : k.dir }));
}

/** A cursor value as Prisma's filters take it. */
function prismaValue(key: SortKey, value: Exclude<SortValue, null>): unknown {
  switch (key.type) {
    case 'bigint': {
      // A number suits an `Int` field as well as a `BigInt` one; past 2^53 only a bigint is exact.
      const n = BigInt(value);
      return Number.isSafeInteger(Number(n)) ? Number(n) : n;
    }
    case 'timestamp':
      return exactTimestamp(String(value)).floor;
    default:
      return value;
  }
}

/** The rows strictly after `after` in `spec` (fetch order), or at or after the first sub-millisecond timestamp. */
export function keysetCondition(spec: SortSpec, after: readonly SortValue[]): KeysetCondition {
  const widenAt = spec.findIndex((k, i) => k.type === 'timestamp' && after[i] !== null && exactTimestamp(String(after[i])).rest !== 0);
  const nullsOf = (k: SortKey): 'first' | 'last' | undefined => (k.nullable ? k.nullable.nulls : undefined);
  const field = (i: number, filter: unknown): WhereInput => ({ [spec[i]!.key]: filter });
  // `cond` (null: no row) or, when the key puts NULLs last, a NULL.
  const orNull = (i: number, cond: WhereInput | null): WhereInput | null => {
    if (nullsOf(spec[i]!) !== 'last') return cond;
    return cond === null ? field(i, null) : { OR: [cond, field(i, null)] };
  };
  // `key op v`; Prisma's boolean filters have no `gt`/`lt`: false < true, spelled out.
  // Returns null for no row, `ALL` for every non-null row.
  const compare = (i: number, op: 'gt' | 'lt' | 'gte' | 'lte', v: Exclude<SortValue, null>): WhereInput | null | typeof ALL => {
    const k = spec[i]!;
    if (k.type !== 'boolean') return field(i, { [op]: prismaValue(k, v) });
    const above = op === 'gt' || op === 'gte';
    if (op === 'gt' || op === 'lt') return v === !above ? field(i, above) : null;
    return v === above ? field(i, v) : ALL;
  };

  // Rows after the cursor on key i alone ("gt"), rows tied with it ("eq").
  const gt = (i: number): WhereInput | null => {
    const k = spec[i]!;
    const v = after[i]!;
    if (v === null) return nullsOf(k) === 'first' ? field(i, { not: null }) : null;
    if (i === widenAt) {
      // At or after the cursor's millisecond, in the key's direction.
      const { floor } = exactTimestamp(String(v));
      const bound = k.dir === 'asc' ? { gte: floor } : { lt: new Date(floor.getTime() + 1) };
      return orNull(i, field(i, bound));
    }
    const strict = compare(i, k.dir === 'asc' ? 'gt' : 'lt', v);
    return orNull(i, strict === ALL ? field(i, { not: null }) : strict);
  };
  const eq = (i: number): WhereInput => {
    const v = after[i]!;
    return field(i, v === null ? null : prismaValue(spec[i]!, v));
  };
  // after(i) = gt(i) OR (eq(i) AND after(i + 1)); after the last (unique) key, nothing.
  const afterFrom = (i: number): WhereInput | null => {
    const strict = gt(i);
    if (i === spec.length - 1 || i === widenAt) return strict;
    const rest = afterFrom(i + 1);
    const tie = rest === null ? null : { AND: [eq(i), rest] };
    if (strict === null) return tie;
    if (tie === null) return strict;
    return { OR: [strict, tie] };
  };
  const predicate = afterFrom(0);
  const widened = widenAt !== -1;
  if (predicate === null) return { where: { OR: [] }, widened };
  // The leading range bound: implied by the predicate, but a plain comparison the planner
  // turns into an index range. A null cursor value or a widened leading key needs none.
  const k0 = spec[0]!;
  const v0 = after[0]!;
  if (v0 === null || spec.length === 1 || widenAt === 0) return { where: predicate, widened };
  const range = compare(0, k0.dir === 'asc' ? 'gte' : 'lte', v0);
  const bound = range === ALL ? null : orNull(0, range);
  return { where: bound === null ? predicate : { AND: [bound, predicate] }, widened };
}
