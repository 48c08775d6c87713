/**
 * `Paginator.planSlice` and `slice` over `paginateArray` agree with the Relay Cursor
 * Connections specification's algorithm run on the whole sorted array (ApplyCursorsToEdges,
 * EdgesToReturn, HasNextPage, HasPreviousPage), for every combination of first, after, last
 * and before, over rows with heavy ties and nulls.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPaginator } from './paginator.ts';
import { paginateArray } from './paginate-array.ts';
import type { SortKey } from './types.ts';

interface Row {
  id: number;
  grp: number;
  label: string | null;
}
const SORT: readonly SortKey[] = [
  { key: 'label', dir: 'desc', type: 'string', nullable: { nulls: 'last' } },
  { key: 'grp', dir: 'asc', type: 'int' },
  { key: 'id', dir: 'desc', type: 'int', unique: true },
];
const LABELS = ['a', 'b', null];
/** The sort order, written out by hand. */
const rank = (l: string | null): number => (l === null ? 99 : -LABELS.indexOf(l));
const reference = (a: Row, b: Row): number => rank(a.label) - rank(b.label) || a.grp - b.grp || b.id - a.id;

// A fixed clock: a cursor carries its issue time, and the cursors are compared as text.
const paginator = createPaginator<Row>({ endpoint: 'Query.rows', sort: SORT, limits: { default: 4, max: 50 }, cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] }, clock: () => Date.UTC(2026, 0, 1) });

describe('Paginator.planSlice/slice: the specification\'s algorithm', () => {
  it('edges, cursors and pageInfo equal the algorithm run on the whole sorted array', async () => {
    const rowsArb = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 1000 }), grp: fc.integer({ min: 0, max: 2 }), label: fc.constantFrom(...LABELS) }), { selector: (r) => r.id, maxLength: 20 });
    const count = fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined });
    const index = fc.option(fc.nat(), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(rowsArb, count, index, count, index, async (rows, first, afterAt, last, beforeAt) => {
        const sorted = [...rows].sort(reference);
        // Every row's cursor, from one slice over them all.
        const everything = await paginator.planSlice({ first: 50 });
        const all = await paginator.slice(everything, paginateArray(rows, everything, everything.sort).rows);
        expect(all.items).toEqual(sorted);
        const cursorOf = (i: number | undefined) => (i === undefined || sorted.length === 0 ? undefined : all.cursors[i % sorted.length]);
        const after = cursorOf(afterAt);
        const before = cursorOf(beforeAt);
        // The specification's algorithm, by index into the sorted array.
        let edges = sorted;
        if (after !== undefined) edges = edges.slice(all.cursors.indexOf(after) + 1);
        if (before !== undefined) edges = edges.filter((r) => reference(r, sorted[all.cursors.indexOf(before)]!) < 0);
        const firstOrDefault = first ?? (last === undefined ? 4 : undefined);
        let returned = edges;
        if (firstOrDefault !== undefined) returned = returned.slice(0, firstOrDefault);
        if (last !== undefined) returned = returned.slice(Math.max(0, returned.length - last));
        const hasNext = firstOrDefault !== undefined && edges.length > firstOrDefault;
        const hasPrevious = last !== undefined && edges.length > last;

        const plan = await paginator.planSlice({ first, after, last, before });
        const got = await paginator.slice(plan, paginateArray(rows, plan, plan.sort).rows);
        expect(got.items).toEqual(returned);
        expect(got.cursors).toEqual(returned.map((r) => all.cursors[sorted.indexOf(r)]));
        expect([got.hasNext, got.hasPrevious]).toEqual([hasNext, hasPrevious]);
      }),
      { numRuns: 400 },
    );
  });
});
