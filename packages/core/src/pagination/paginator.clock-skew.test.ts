/**
 * Two instances whose clocks disagree: a cursor stamped by an instance
 * whose clock runs ahead is refused by the others once it is further ahead than
 * `cursor.clockSkewSeconds` (60 s by default), as 400 invalid_cursor, never a page.
 */
import { describe, expect, it } from 'vitest';
import { isKeysetError } from '../errors.ts';
import { paginateArray } from './paginate-array.ts';
import { createPaginator, type PaginatorOptions } from './paginator.ts';
import type { CursorPage } from './types.ts';

interface Row {
  id: number;
}
const rows: Row[] = Array.from({ length: 10 }, (_, i) => ({ id: i + 1 }));
const NOW = 1_790_000_000_000;
const options = (clock: () => number, cursor: Partial<PaginatorOptions['cursor']> = {}): PaginatorOptions => ({
  endpoint: 'GET /rows',
  sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }],
  cursor: { secrets: ['clock-skew-test-secret-clock-skew-test-secret'], ...cursor },
  clock,
});

/** The next-page cursor an instance whose clock reads `clock` hands out. */
async function cursorFrom(clock: number): Promise<string> {
  const paginator = createPaginator<Row>(options(() => clock));
  const plan = await paginator.plan(new URLSearchParams('limit=3'));
  const { body } = await paginator.page(plan, paginateArray(rows, plan, paginator.sort).rows, { url: 'https://api.example.com/rows?limit=3' });
  return (body as CursorPage<Row>).nextCursor!;
}

async function planned(cursor: string, cursorOptions: Partial<PaginatorOptions['cursor']> = {}): Promise<unknown> {
  const paginator = createPaginator<Row>(options(() => NOW, cursorOptions));
  return paginator.plan(new URLSearchParams({ cursor, limit: '3' })).then(
    (plan) => plan,
    (err: unknown) => (isKeysetError(err) ? { status: err.status, code: err.code, cause: (err.cause as Error).message } : err),
  );
}

describe('cursors from an instance whose clock runs ahead', () => {
  it('are accepted within 60 s, refused beyond', async () => {
    expect(await planned(await cursorFrom(NOW + 60_000))).toMatchObject({ mode: 'cursor', after: [3] });
    expect(await planned(await cursorFrom(NOW + 61_000))).toEqual({ status: 400, code: 'invalid_cursor', cause: 'future' });
    expect(await planned(await cursorFrom(NOW + 86_400_000))).toEqual({ status: 400, code: 'invalid_cursor', cause: 'future' });
  });

  it('follow cursor.clockSkewSeconds', async () => {
    const ahead = await cursorFrom(NOW + 240_000);
    expect(await planned(ahead, { clockSkewSeconds: 300 })).toMatchObject({ mode: 'cursor', after: [3] });
    expect(await planned(ahead, { clockSkewSeconds: 120 })).toMatchObject({ code: 'invalid_cursor', cause: 'future' });
  });

  it('a cursor from a clock that runs behind is fine (only ttlSeconds bounds its age)', async () => {
    expect(await planned(await cursorFrom(NOW - 3_600_000))).toMatchObject({ mode: 'cursor', after: [3] });
    expect(await planned(await cursorFrom(NOW - 3_600_000), { ttlSeconds: 3_599 })).toMatchObject({ code: 'invalid_cursor', cause: 'expired' });
  });
});
