/** The offset limit as a property: a plan is made exactly when `offset ≤ maxOffset`, else a 400 naming the limit. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeysetError, toProblem } from '../errors.ts';
import { createPaginator } from './paginator.ts';

const SORT = [{ key: 'id', dir: 'asc', type: 'bigint', unique: true }] as const;
const SECRET = 'a-limit-policy-property-secret-of-32-bytes';

describe('limits.maxOffset', () => {
  it('plans every offset up to maxOffset as asked, and answers 400 offset_too_large with max_offset past it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 1_000_000 }), fc.nat({ max: 2_000_000 }), fc.integer({ min: 1, max: 100 }), async (maxOffset, offset, limit) => {
        const paginator = createPaginator<{ id: string }>({ endpoint: 'GET /x', sort: [...SORT], limits: { maxOffset }, cursor: { secrets: [SECRET] } });
        expect(paginator.limits.maxOffset).toBe(maxOffset);
        const query = new URLSearchParams({ offset: String(offset), limit: String(limit) });
        if (offset <= maxOffset) {
          expect(await paginator.plan(query)).toMatchObject({ mode: 'offset', offset, limit });
          return;
        }
        const err = await Promise.resolve()
          .then(() => paginator.plan(query))
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err).toBeInstanceOf(KeysetError);
        expect(toProblem(err).body).toMatchObject({ status: 400, code: 'offset_too_large', max_offset: maxOffset });
      }),
      { numRuns: 200 },
    );
  });

  it('leaves cursor pages alone, and without maxOffset any offset is planned', async () => {
    const capped = createPaginator<{ id: string }>({ endpoint: 'GET /x', sort: [...SORT], limits: { maxOffset: 10 }, cursor: { secrets: [SECRET] } });
    expect(await capped.plan(new URLSearchParams('limit=5'))).toMatchObject({ mode: 'cursor' });
    const open = createPaginator<{ id: string }>({ endpoint: 'GET /x', sort: [...SORT], cursor: { secrets: [SECRET] } });
    expect(open.limits.maxOffset).toBeUndefined();
    expect(await open.plan(new URLSearchParams(`offset=${Number.MAX_SAFE_INTEGER}`))).toMatchObject({ offset: Number.MAX_SAFE_INTEGER });
  });
});
