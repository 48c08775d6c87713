/**
 * The SQL walk properties, run by one test file per database (PGlite, PostgreSQL), with
 * the driver at its defaults (no type parser): the SQL selects every sort value as text
 * (`selectItems`), as docs/pagination.md's raw-SQL recipe does. Decimals include ones
 * wider than a double.
 * Test fixture only: not exported, not built.
 * @module
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { keysetWhere } from './keyset-where.ts';
import { createPaginator } from './paginator.ts';
import type { PagePlan, SortKey } from './types.ts';
import { checkBackwardStatic, checkBothWaysConcurrent } from './backward-walks.test-support.ts';
import {
  countItems,
  datasetArbitrary,
  insertItems,
  newItem,
  referenceCompare,
  resetItems,
  selectItems,
  sortArbitrary,
  walkCursor,
  walkOffset,
  type Item,
  type SqlClient,
} from './walk.test-support.ts';

const SECRET = 'a-sql-walk-test-secret-of-at-least-32-bytes';
const paginatorFor = (sort: SortKey[]) =>
  createPaginator<Item>({ endpoint: 'GET /items', sort, limits: { max: 10 }, cursor: { secrets: [SECRET] } });

async function fetchPage(db: SqlClient, plan: PagePlan): Promise<Item[]> {
  const k = keysetWhere(plan, plan.sort, 'postgres', { paramOffset: 1 });
  const { rows } = await db.query(selectItems(k), [1, ...k.params]);
  return rows as Item[];
}

/** Static dataset: cursor walk = reference order = offset walk. */
export async function staticWalkProperty(db: SqlClient, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(datasetArbitrary(60, true), sortArbitrary(), fc.integer({ min: 1, max: 10 }), fc.nat(), async (rows, sort, limit, k) => {
      await resetItems(db, rows);
      const paginator = paginatorFor(sort);
      const expected = [...rows].sort(referenceCompare(sort)).map((r) => r.id);
      const byCursor = await walkCursor(paginator, (plan) => fetchPage(db, plan), limit);
      expect(byCursor.map((r) => r.id)).toEqual(expected);
      const byOffset = await walkOffset(
        paginator,
        async (plan) => ({ rows: await fetchPage(db, plan), total: await countItems(db) }),
        limit,
      );
      expect(byOffset.map((r) => r.id)).toEqual(expected);
      await checkBackwardStatic(paginator, (plan) => fetchPage(db, plan), limit, k);
    }),
    { numRuns },
  );
}

/** Inserts and deletes between pages, forward then back: rows present throughout appear once, in order. */
export async function concurrentWalkProperty(db: SqlClient, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      datasetArbitrary(50, true),
      sortArbitrary(),
      fc.integer({ min: 1, max: 6 }),
      fc.infiniteStream(fc.nat()),
      async (initial, sort, limit, randomness) => {
        await resetItems(db, initial);
        const paginator = paginatorFor(sort);
        const random = randomness[Symbol.iterator]();
        const pick = (k: number): number => (random.next().value as number) % k;
        const live = initial.map((r) => r.id);
        let inserted = 0;
        await checkBothWaysConcurrent(paginator, sort, limit, {
          fetch: (plan) => fetchPage(db, plan),
          ids: async () => [...live],
          mutate: async () => {
            const gone: string[] = [];
            for (let n = pick(3); n > 0 && live.length > 0; n--) {
              const [id] = live.splice(pick(live.length), 1);
              gone.push(id!);
              await db.query('DELETE FROM items WHERE id = $1::bigint', [id]);
            }
            const fresh = Array.from({ length: pick(3) }, () => newItem(inserted++, pick, true));
            await insertItems(db, fresh);
            live.push(...fresh.map((r) => r.id));
            return gone;
          },
        });
      },
    ),
    { numRuns },
  );
}
