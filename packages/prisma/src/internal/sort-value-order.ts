/**
 * The order of cursor-form sort values, for the rows a widened condition returns before the
 * cursor (see `find-many-page.ts`): each value as `Paginator.page` reads it (timestamps and
 * decimals as text, bigints as text or `bigint`, the rest as JS values).
 * @module
 */
import type { SortKey, SortValue } from '@keyset/core';
import { exactTimestamp } from './exact-timestamp.ts';

/** `-1`, `0` or `1`: how `a` orders against `b` under `key` (its direction and null placement). */
export function compareKeyValues(key: SortKey, a: SortValue | bigint, b: SortValue | bigint): number {
  if (a === null || b === null) {
    if (a === b) return 0;
    const nullsFirst = key.nullable !== false && key.nullable?.nulls === 'first';
    return (a === null) === nullsFirst ? -1 : 1;
  }
  const c = compareValues(key.type, a, b);
  return key.dir === 'asc' ? c : -c;
}

function compareValues(type: SortKey['type'], a: string | number | boolean | bigint, b: string | number | boolean | bigint): number {
  switch (type) {
    case 'timestamp':
      return sign(exactTimestamp(String(a)).micros - exactTimestamp(String(b)).micros);
    case 'bigint':
      return sign(BigInt(a) - BigInt(b));
    case 'decimal':
      return compareDecimals(String(a), String(b));
    case 'boolean':
      return Number(a) - Number(b);
    default:
      return a < b ? -1 : a > b ? 1 : 0;
  }
}

function sign(n: bigint): number {
  return n < 0n ? -1 : n > 0n ? 1 : 0;
}

/** Exact comparison of decimal text (`-1.50`, `2`: plain notation, as `Decimal.toFixed()` prints). */
function compareDecimals(a: string, b: string): number {
  const [an, ad] = scaled(a);
  const [bn, bd] = scaled(b);
  const digits = Math.max(ad, bd);
  return sign(an * 10n ** BigInt(digits - ad) - bn * 10n ** BigInt(digits - bd));
}

function scaled(text: string): [bigint, number] {
  const [whole = '0', fraction = ''] = text.split('.');
  // `-0.25` → -25n at scale 2: the sign stays on the digits.
  return [BigInt(whole + fraction), fraction.length];
}
