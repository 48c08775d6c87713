import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, KeysetError } from '../errors.ts';
import { paginateArray } from './paginate-array.ts';
import { createPaginator, type PaginatorOptions } from './paginator.ts';
import { countTotal, resolveTotalPolicy, settleTotal, type TotalCounters } from './total-policy.ts';
import type { OffsetPage, SortKey } from './types.ts';

interface Row {
  id: number;
}

const sort: SortKey[] = [{ key: 'id', dir: 'asc', type: 'int', unique: true }];
const base: PaginatorOptions = { endpoint: 'GET /rows', sort, cursor: { secrets: ['total-policy-test-secret-0123456789'] } };
const rows: Row[] = Array.from({ length: 47 }, (_, i) => ({ id: i + 1 }));

/** Counters over `rows` that record what ran: an estimate that is `guess`. */
function counters(guess: number, calls: string[]): TotalCounters {
  return {
    count: (limit) => {
      calls.push(limit === undefined ? 'count' : `count(${limit})`);
      return limit === undefined ? rows.length : Math.min(rows.length, limit);
    },
    estimate: () => {
      calls.push('estimate');
      return guess;
    },
  };
}

async function offsetPage(options: Partial<PaginatorOptions>, query: string, guess = 60) {
  const paginator = createPaginator<Row>({ ...base, ...options });
  const plan = await paginator.plan(new URLSearchParams(query));
  const calls: string[] = [];
  const total = await countTotal(plan, counters(guess, calls));
  const { rows: fetched } = paginateArray(rows, plan, plan.sort);
  const url = `https://x.test/rows?${query}`;
  const { body, headers } = await paginator.page(plan, fetched, total === undefined ? { url } : { url, total });
  return { body: body as OffsetPage<Row>, link: headers.link ?? '', calls };
}

describe('total modes', () => {
  it('exact (the default) counts every row and the body is { items, total } as before', async () => {
    const { body, calls } = await offsetPage({}, 'offset=10&limit=5');
    expect(calls).toEqual(['count']);
    expect(Object.keys(body)).toEqual(['items', 'total']);
    expect(body.total).toBe(47);
  });

  it('a capped exact count stops at cap + 1 rows and reports the cap with totalAtLeast', async () => {
    const { body, calls, link } = await offsetPage({ total: { mode: 'exact', cap: 20 } }, 'offset=0&limit=5');
    expect(calls).toEqual(['count(21)']);
    expect(body).toMatchObject({ total: 20, totalAtLeast: true });
    expect(body.totalEstimated).toBeUndefined();
    expect(link).toContain('rel="next"');
  });

  it('a capped count below the cap is exact and unflagged', async () => {
    const { body } = await offsetPage({ total: { mode: 'exact', cap: 100 } }, 'offset=0&limit=5');
    expect(body).toEqual({ items: rows.slice(0, 5), total: 47 });
  });

  it('past the cap, the page itself raises "at least" to what it proves, and the last page is exact', async () => {
    const deep = await offsetPage({ total: { mode: 'exact', cap: 20 } }, 'offset=30&limit=5');
    expect(deep.body).toMatchObject({ total: 36, totalAtLeast: true });
    const last = await offsetPage({ total: { mode: 'exact', cap: 20 } }, 'offset=45&limit=5');
    expect(last.body).toEqual({ items: rows.slice(45), total: 47 });
    expect(last.link).not.toContain('rel="next"');
  });

  it('estimated reports the estimate with totalEstimated, and links next by the extra row, not the estimate', async () => {
    const low = await offsetPage({ total: 'estimated' }, 'offset=0&limit=5', 3);
    expect(low.calls).toEqual(['estimate']);
    // The estimate (3) is below what the page proves (6 rows: 5 items and the extra one).
    expect(low.body).toMatchObject({ total: 6, totalEstimated: true });
    expect(low.link).toContain('rel="next"');
    const high = await offsetPage({ total: 'estimated' }, 'offset=40&limit=5', 1000);
    expect(high.body).toMatchObject({ total: 1000, totalEstimated: true });
    // The last page knows the exact total, whatever the estimate said.
    const end = await offsetPage({ total: 'estimated' }, 'offset=45&limit=5', 1000);
    expect(end.body).toEqual({ items: rows.slice(45), total: 47 });
    expect(end.link).not.toContain('rel="next"');
  });

  it('an estimate is rounded and never negative; an empty page past the end bounds it by the offset', async () => {
    expect((await offsetPage({ total: 'estimated' }, 'offset=0&limit=5', 52.6)).body.total).toBe(53);
    expect((await offsetPage({ total: 'estimated' }, 'offset=100&limit=5', 500)).body).toMatchObject({ total: 100, totalEstimated: true });
    expect(settleTotal(0, 0, false, { value: -1, accuracy: 'estimated' })).toEqual({ total: 0 });
  });

  it('estimated without an estimate counts exactly and says so', async () => {
    const paginator = createPaginator<Row>({ ...base, total: 'estimated' });
    const plan = await paginator.plan(new URLSearchParams('offset=0'));
    expect(await countTotal(plan, { count: () => 47 })).toEqual({ value: 47, accuracy: 'exact' });
  });

  it('none counts nothing: total null, has-more from the extra row', async () => {
    const { body, calls, link } = await offsetPage({ total: 'none' }, 'offset=0&limit=5');
    expect(calls).toEqual([]);
    expect(body).toEqual({ items: rows.slice(0, 5), total: null });
    expect(link).toContain('rel="next"');
  });

  it('cursor mode never counts', async () => {
    const paginator = createPaginator<Row>(base);
    const plan = await paginator.plan(new URLSearchParams('limit=5'));
    const calls: string[] = [];
    expect(await countTotal(plan, counters(10, calls))).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('the plan carries the policy, frozen', async () => {
    const plan = await createPaginator<Row>({ ...base, total: { mode: 'exact', cap: 1000 } }).plan(new URLSearchParams('offset=0'));
    expect(plan).toMatchObject({ mode: 'offset', total: { mode: 'exact', cap: 1000 } });
    expect(plan.mode === 'offset' && Object.isFrozen(plan.total)).toBe(true);
  });

  it.each([
    ['an unknown mode', 'approximate'],
    ['a cap on estimated', { mode: 'estimated', cap: 10 }],
    ['a zero cap', { mode: 'exact', cap: 0 }],
    ['a fractional cap', { mode: 'exact', cap: 1.5 }],
    ['a string cap', { mode: 'exact', cap: '10' }],
    ['null', null],
  ])('refuses %s with a ConfigError', (_name, total) => {
    expect(() => createPaginator<Row>({ ...base, total: total as never })).toThrow(ConfigError);
    expect(() => resolveTotalPolicy(total as never)).toThrow(ConfigError);
  });

  it('property: a settled non-exact total never contradicts the page, and is exact on the last page', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 250 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.constantFrom('estimated' as const, 'atLeast' as const),
        (size, offset, limit, guess, accuracy) => {
          const itemCount = Math.max(0, Math.min(limit, size - offset));
          const hasMore = offset + limit < size;
          const settled = settleTotal(offset, itemCount, hasMore, { value: guess, accuracy });
          if (!hasMore && itemCount > 0) expect(settled).toEqual({ total: size });
          else if (hasMore) {
            expect(settled.total).toBeGreaterThanOrEqual(offset + itemCount + 1);
            expect(accuracy === 'estimated' ? settled.totalEstimated : settled.totalAtLeast).toBe(true);
          }
        },
      ),
    );
  });
});

describe('filters declared on the paginator', () => {
  const statusFilter = (query: URLSearchParams) => {
    const status = query.getAll('status').sort();
    return status.length === 0 ? {} : { status };
  };

  it('are parsed from the query, carried on the plan, and bound into the cursor', async () => {
    const paginator = createPaginator<Row>({ ...base, filters: statusFilter });
    const plan = await paginator.plan(new URLSearchParams('status=b&status=a&limit=2'));
    expect(plan.filters).toEqual({ status: ['a', 'b'] });
    expect(Object.isFrozen(plan.filters)).toBe(true);
    const { body } = await paginator.page(plan, rows.slice(0, 3), { url: 'https://x.test/rows?status=b&status=a&limit=2' });
    const next = (body as { nextCursor: string }).nextCursor;
    // The same filters in another order share the cursor; other filters refuse it.
    await expect(paginator.plan(new URLSearchParams(`status=a&status=b&cursor=${next}`))).resolves.toMatchObject({ mode: 'cursor' });
    await expect(paginator.plan(new URLSearchParams(`status=a&cursor=${next}`))).rejects.toMatchObject({ code: 'invalid_cursor' });
    await expect(paginator.plan(new URLSearchParams(`cursor=${next}`))).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  it('a bad filter value thrown by the parser is the request error', async () => {
    const paginator = createPaginator<Row>({
      ...base,
      filters: () => {
        throw new KeysetError('invalid_request', { detail: 'bad status', extensions: { field: 'status' } });
      },
    });
    await expect(paginator.plan(new URLSearchParams('status=x'))).rejects.toMatchObject({ code: 'invalid_request', extensions: { field: 'status' } });
  });

  it('filters given to plan() take precedence; a non-function is a ConfigError', async () => {
    const paginator = createPaginator<Row>({ ...base, filters: statusFilter });
    expect((await paginator.plan(new URLSearchParams('status=a'), { filters: { tenant: 't1' } })).filters).toEqual({ tenant: 't1' });
    expect(() => createPaginator<Row>({ ...base, filters: { status: 'a' } as never })).toThrow(ConfigError);
  });
});
