/**
 * Property: under any `?sort=` a client may send over the declared fields, the cursor walk
 * yields every row once in that order (the tie-breaker appended in the direction of the
 * last field), walking back revisits the same pages reversed, and every Link keeps `sort`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paginateArray } from './paginate-array.ts';
import { createPaginator } from './paginator.ts';
import type { SortableField } from './sort-param.ts';
import type { SortKey } from './types.ts';
import { datasetArbitrary, referenceCompare, walkBack, walkCursorPages, type Item } from './walk.test-support.ts';

const SECRET = 'a-client-sort-test-secret-of-32-bytes!!';
const SORTABLE: readonly SortableField[] = [
  { name: 'createdAt', column: 't.created_at', type: 'timestamp' },
  { name: 'grp', column: 't.grp', type: 'int' },
  { name: 'score', column: 't.score', type: 'decimal', nullable: { nulls: 'last' } },
  { name: 'label', column: 't.label', type: 'string', nullable: { nulls: 'first' } },
  { name: 'flag', column: 't.flag', type: 'boolean' },
  { name: 'id', column: 't.id', type: 'bigint', unique: true },
];
const paginator = createPaginator<Item>({
  endpoint: 'GET /items',
  sort: [
    { key: 'createdAt', column: 't.created_at', dir: 'desc', type: 'timestamp' },
    { key: 'id', column: 't.id', dir: 'desc', type: 'bigint', unique: true },
  ],
  sortable: SORTABLE,
  limits: { max: 10 },
  cursor: { secrets: [SECRET] },
});

/** `?sort=` values and the order they mean, written out independently of the parser. */
const sortChoice = fc
  .shuffledSubarray([...SORTABLE], { minLength: 1, maxLength: 4 })
  .chain((fields) => fc.tuple(fc.constant(fields), fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length })))
  .map(([fields, descs]) => {
    const keys: SortKey[] = [];
    const terms: string[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      terms.push(`${descs[i] ? '-' : ''}${f.name}`);
      keys.push({ key: f.name, type: f.type, dir: descs[i] ? 'desc' : 'asc', nullable: f.nullable ?? false, unique: f.unique === true });
      if (f.unique === true) break; // a unique field ends the order
    }
    const last = keys[keys.length - 1]!;
    if (last.unique !== true) keys.push({ key: 'id', type: 'bigint', dir: last.dir, unique: true });
    return { sort: terms.join(','), keys };
  });

describe('client-chosen sort', () => {
  it('walks every row once in the chosen order, back over the same pages, Links keeping sort', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArbitrary(50), sortChoice, fc.integer({ min: 1, max: 6 }), async (rows, { sort, keys }, limit) => {
        const fetch = async (plan: Parameters<typeof paginateArray>[1]) => paginateArray(rows, plan, plan.sort).rows;
        const forward = await walkCursorPages(paginator, fetch, limit, undefined, sort);
        expect(forward.flatMap((p) => p.items).map((r) => r.id)).toEqual([...rows].sort(referenceCompare(keys)).map((r) => r.id));
        const back = await walkBack(paginator, fetch, limit, forward[forward.length - 1]!, undefined, sort);
        expect(back.map((p) => p.items.map((r) => r.id))).toEqual(forward.slice(0, -1).reverse().map((p) => p.items.map((r) => r.id)));
      }),
      { numRuns: 150 },
    );
  });
});
