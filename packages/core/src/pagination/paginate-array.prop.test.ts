/**
 * Property: walking any dataset page by page in memory yields every row exactly once,
 * in the sort order, for any sort spec (ties, mixed directions, nullable keys with
 * nulls first/last, µs timestamps, bigints past 2^53); offset walks agree; and with
 * inserts and deletes between pages, every row present for the whole walk appears once.
 * Walking back with `prevCursor` revisits the same pages in reverse, and under writes sees
 * every row present throughout exactly once too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paginateArray } from './paginate-array.ts';
import { createPaginator } from './paginator.ts';
import type { SortKey } from './types.ts';
import { checkBackwardStatic, checkBothWaysConcurrent } from './backward-walks.test-support.ts';
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
        const byCursor = await walkCursor(paginator, async (plan) => paginateArray(rows, plan, plan.sort).rows, limit);
        expect(byCursor.map((r) => r.id)).toEqual(expected);
        const byOffset = await walkOffset(paginator, async (plan) => paginateArray(rows, plan, plan.sort), limit);
        expect(byOffset.map((r) => r.id)).toEqual(expected);
        // Offset mode without a count decides has-more from the extra row alone.
        const uncounted = await walkOffset(paginator, async (plan) => ({ rows: paginateArray(rows, plan, plan.sort).rows }), limit);
        expect(uncounted.map((r) => r.id)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('walking back from the last page and from any page revisits the forward pages in reverse', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArbitrary(60), sortArbitrary(), fc.integer({ min: 1, max: 6 }), fc.nat(), async (rows, sort, limit, k) => {
        const paginator = paginatorFor(sort);
        await checkBackwardStatic(paginator, async (plan) => paginateArray(rows, plan, plan.sort).rows, limit, k);
      }),
      { numRuns: 150 },
    );
  });

  it('with inserts and deletes between pages, rows present throughout appear exactly once, in order, both ways', async () => {
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
          let inserted = 0;
          await checkBothWaysConcurrent(paginator, sort, limit, {
            fetch: async (plan) => paginateArray(rows, plan, plan.sort).rows,
            ids: async () => rows.map((r) => r.id),
            mutate: async () => {
              const gone: string[] = [];
              for (let n = pick(3); n > 0 && rows.length > 0; n--) gone.push(rows.splice(pick(rows.length), 1)[0]!.id);
              for (let n = pick(3); n > 0; n--) rows = [...rows, newItem(inserted++, pick)];
              return gone;
            },
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
