/**
 * Offset mode's `total` through Prisma: `count` with the same `where` as the page.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { Args } from '@prisma/client/runtime/client';

/** Options of {@link countRows}. */
export interface CountRowsOptions {
  /**
   * Stop counting after this many rows (`count({ where, take })`): what `countTotal` asks
   * for under a capped exact total.
   * @default no limit
   */
  limit?: number;
}

/** Every name `CountRowsOptions` knows, checked on each call (a misspelt `limit` would count every row). */
const COUNT_ROWS_OPTIONS = { limit: true } as const satisfies KnownOptions<CountRowsOptions>;

/**
 * Counts the rows `where` matches on `model` (`prisma.order`). Pass the `where` of your
 * `findMany` arguments, not the page's: the total counts every matching row. Prisma has
 * no planner estimate (`total: 'estimated'`); count exactly, or with a cap.
 *
 * @example
 * ```ts
 * const where = { status: 'paid' };
 * const total = await countTotal(plan, { count: (limit) => countRows(prisma.order, where, { limit }) });
 * ```
 */
export async function countRows<T>(model: T, where: Args<T, 'count'>['where'], options: CountRowsOptions = {}): Promise<number> {
  assertKnownOptions('countRows', options, COUNT_ROWS_OPTIONS);
  const { limit } = options;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new RangeError(`countRows: limit must be a positive integer, got ${String(limit)}`);
  const count = (model as unknown as { count(a: Record<string, unknown>): PromiseLike<number> }).count;
  return Number(await count.call(model, limit === undefined ? { where } : { where, take: limit }));
}
