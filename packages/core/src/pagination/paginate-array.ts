/**
 * In-memory source: sorts a copy of the rows with the spec's exact comparator and cuts
 * the page the plan asks for. Bigints, decimals and microsecond timestamps compare
 * exactly (never through `Number` or `Date`); nulls go where the spec says.
 * @module
 */
import { compareKey, toComparable, toSortValue, type Comparable } from '../internal/sort-values.ts';
import { fetchSort, planSortSpec } from './sort-spec.ts';
import type { PagePlan, SortSpec } from './types.ts';

function compareTuples(sort: SortSpec, a: readonly Comparable[], b: readonly Comparable[]): number {
  for (let i = 0; i < sort.length; i++) {
    const c = compareKey(sort[i]!, a[i] as Comparable, b[i] as Comparable);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * Pages an array: `rows` holds up to `plan.take` rows after the cursor (or from the
 * offset) in fetch order (reversed for a backward page, as a SQL source returns them:
 * pass them to `Paginator.page` as they are); `total` is the array's length. `sort` is
 * `plan.sort`. The input is not modified.
 *
 * @example
 * ```ts
 * const plan = await paginator.plan(url.searchParams);
 * const { rows, total } = paginateArray(allOrders, plan, plan.sort);
 * const { body, headers } = await paginator.page(plan, rows, { url, total });
 * ```
 */
export function paginateArray<Row>(rows: readonly Row[], plan: PagePlan, sort: SortSpec): { rows: Row[]; total: number } {
  const spec = fetchSort(plan, planSortSpec(plan, sort));
  const decorated = rows.map((row) => ({
    row,
    tuple: spec.map((k) => toComparable(k.type, toSortValue(k, (row as Record<string, unknown>)[k.key]))),
  }));
  decorated.sort((a, b) => compareTuples(spec, a.tuple, b.tuple));
  let start: number;
  if (plan.mode === 'offset') {
    start = plan.offset;
  } else if (plan.after === null) {
    start = 0;
  } else {
    if (plan.after.length !== spec.length) throw new TypeError('plan.after does not match the sort spec');
    const after = spec.map((k, i) => toComparable(k.type, plan.after![i] as Exclude<typeof plan.after, null>[number]));
    // First row strictly after the cursor: binary search over the sorted tuples.
    let lo = 0;
    let hi = decorated.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareTuples(spec, decorated[mid]!.tuple, after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  return { rows: decorated.slice(start, start + plan.take).map((d) => d.row), total: rows.length };
}
