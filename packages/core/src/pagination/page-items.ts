/**
 * From fetched rows to a page's items: the one place that drops the extra row and puts a
 * backward page back into sort order, so every source (memory, SQL, query builders)
 * agrees on what a page holds.
 * @module
 */
import type { PagePlan } from './types.ts';

/**
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
