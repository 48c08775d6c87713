/**
 * The deferred-join property for SQL builders: an offset page fetched the builder's way
 * (a subquery of sort keys with LIMIT/OFFSET joined back to the rows) equals the page of
 * the plain query (`ORDER BY … LIMIT … OFFSET` on the filtered query), row for row and
 * value for value, and both equal the reference order's slice. Random datasets with
 * heavy ties, random sort specs (mixed directions, NULLs first or last), random filters
 * and offsets up to past the end.
 * Test fixture only: not exported, not built.
 * @module
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { createPaginator } from './paginator.ts';
import type { PagePlan, SortSpec } from './types.ts';
import { datasetArbitrary, referenceCompare, sortArbitrary, type Item } from './walk.test-support.ts';

/** Which rows a page reads: one tenant, and optionally one `grp`. */
export interface ItemFilter {
  tenant: number;
  grp: number | null;
}

/** One `items` table (columns as in `ITEMS_DDL`) reached through one query builder. */
export interface OffsetPageSource {
  /** Deletes every row. */
  clear(): Promise<void>;
  insert(items: readonly Item[], tenant: number): Promise<void>;
  /** The builder's page for `plan` over the rows `filter` selects (rows as `WalkSource.fetch` returns them). */
  page(plan: PagePlan, sort: SortSpec, filter: ItemFilter): Promise<Item[]>;
  /** The same page by the plain query: the filtered query with ORDER BY, LIMIT take, OFFSET. */
  plain(plan: PagePlan, sort: SortSpec, filter: ItemFilter): Promise<Item[]>;
}

const SECRET = 'an-offset-pages-test-secret-of-at-least-32-bytes';

/** Deferred-join offset pages equal the plain query's pages and the reference slice. */
export async function offsetPagesAgree(source: OffsetPageSource, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      datasetArbitrary(40),
      fc.infiniteStream(fc.boolean()),
      sortArbitrary(),
      fc.record({ tenant: fc.constantFrom(1, 2), grp: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }) }),
      fc.integer({ min: 1, max: 10 }),
      fc.array(fc.integer({ min: 0, max: 45 }), { minLength: 1, maxLength: 4 }),
      async (rows, tenantBits, sort, filter, limit, offsets) => {
        const bits = tenantBits[Symbol.iterator]();
        const tenants = rows.map(() => (bits.next().value ? 2 : 1));
        await source.clear();
        for (const tenant of [1, 2]) {
          const mine = rows.filter((_, i) => tenants[i] === tenant);
          if (mine.length > 0) await source.insert(mine, tenant);
        }
        const paginator = createPaginator<Item>({ endpoint: 'GET /items', sort, limits: { max: 10 }, cursor: { secrets: [SECRET] } });
        const expected = rows
          .filter((r, i) => tenants[i] === filter.tenant && (filter.grp === null || r.grp === filter.grp))
          .sort(referenceCompare(sort))
          .map((r) => r.id);
        for (const offset of offsets) {
          const plan = await paginator.plan(new URLSearchParams({ limit: String(limit), offset: String(offset) }), { filters: { ...filter } });
          const page = await source.page(plan, paginator.sort, filter);
          expect(page).toEqual(await source.plain(plan, paginator.sort, filter));
          expect(page.map((r) => r.id)).toEqual(expected.slice(offset, offset + limit + 1));
        }
      },
    ),
    { numRuns },
  );
}
