/**
 * Pages of a list over the `(created_at DESC, id DESC)` index, for keys and owners alike.
 * @module
 */

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/**
 * What a page of a list over the `(created_at DESC, id DESC)` index needs, for keys and for
 * owners alike: the direction checked and turned into the comparison and order (backward, a
 * page reached through a prevCursor, reads the same index the other way), `take` and `offset`
 * checked, and a parameter list with its `$n` placeholder maker.
 */
export function pageQuery(query: { take: number; offset?: number | undefined; direction?: 'forward' | 'backward' | undefined }): {
  cmp: '<' | '>';
  order: 'DESC' | 'ASC';
  params: unknown[];
  param: (value: unknown) => string;
} {
  const { take, offset, direction = 'forward' } = query;
  if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`direction must be 'forward' or 'backward'`);
  checkCount('take', take);
  checkCount('offset', offset);
  const params: unknown[] = [];
  return { cmp: direction === 'forward' ? '<' : '>', order: direction === 'forward' ? 'DESC' : 'ASC', params, param: (value) => `$${params.push(value)}` };
}
