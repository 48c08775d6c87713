/**
 * Property: walking any dataset page by page in memory yields every row exactly once,
 * in the sort order, for any sort spec (ties, mixed directions, nullable keys with
 * nulls first/last, µs timestamps, bigints past 2^53); offset walks agree; and with
 * inserts and deletes between pages, every row present for the whole walk appears once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paginateArray } from './paginate-array.ts';
import { createPaginator } from './paginator.ts';
import type { SortKey } from './types.ts';
import { datasetArbitrary, newItem, referenceCompare, sortArbitrary, walkCursor, walkOffset, type Item } from './walk.test-support.ts';

const SECRET = 'an-in-memory-test-secret-of-32-bytes!!';
const paginatorFor = (sort: SortKey[]) =>
  createPaginator<Item>({ endpoint: 'GET /items', sort, limits: { max: 10 }, cursor: { secrets: [SECRET] } });

describe('paginateArray walks', () => {
  it('cursor walk = the reference order, every row once; offset walk agrees', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArbitrary(80), sortArbitrary(), fc.integer({ min: 1, max: 10 }), async (rows, sort, limit) => {
        const paginator = paginatorFor(sort);
        const expected = [...rows].sort(referenceCompare(sort)).map((r) => r.id);
        const byCursor = await walkCursor(paginator, async (plan) => paginateArray(rows, plan, paginator.sort).rows, limit);
        expect(byCursor.map((r) => r.id)).toEqual(expected);
        const byOffset = await walkOffset(paginator, async (plan) => paginateArray(rows, plan, paginator.sort), limit);
        expect(byOffset.map((r) => r.id)).toEqual(expected);
        // Offset mode without a count decides has-more from the extra row alone.
        const uncounted = await walkOffset(paginator, async (plan) => ({ rows: paginateArray(rows, plan, paginator.sort).rows }), limit);
        expect(uncounted.map((r) => r.id)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('with inserts and deletes between pages, rows present throughout appear exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArbitrary(60),
        sortArbitrary(),
        fc.integer({ min: 1, max: 6 }),
        fc.infiniteStream(fc.nat()),
        async (initial, sort, limit, randomness) => {
          const paginator = paginatorFor(sort);
          const random = randomness[Symbol.iterator]();
          const pick = (k: number): number => (random.next().value as number) % k;
          let rows: Item[] = [...initial];
          const deleted = new Set<string>();
          let inserted = 0;
          const seen = await walkCursor(
            paginator,
            async (plan) => paginateArray(rows, plan, paginator.sort).rows,
            limit,
            () => {
              for (let n = pick(3); n > 0 && rows.length > 0; n--) {
                const [gone] = rows.splice(pick(rows.length), 1);
                deleted.add(gone!.id);
              }
              for (let n = pick(3); n > 0; n--) rows.push(newItem(inserted++, pick));
            },
          );
          const ids = seen.map((r) => r.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const row of initial) if (!deleted.has(row.id)) expect(ids).toContain(row.id);
          const compare = referenceCompare(sort);
          for (let i = 1; i < seen.length; i++) expect(compare(seen[i - 1]!, seen[i]!)).toBeLessThan(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
