/**
 * The exact values of a page's timestamp sort columns on PostgreSQL. Prisma Client returns a
 * `DateTime` as a JS `Date`, to the millisecond; a `timestamptz(6)` column holds
 * microseconds, and a cursor built from the `Date` would skip or repeat the rows sharing its
 * millisecond. One raw read by primary key per page brings the columns as text: UTC, six
 * fractional digits, whatever the session's `TimeZone` and `DateStyle`.
 * @module
 */
import type { SortKey } from '@keyset/core';

/** A `DateTime` field and its database column (`o.created_at`: the last part names it). */
export interface TimestampColumn {
  field: string;
  column: string;
}

/** What the read needs of a Prisma Client: `prisma` itself (or a transaction client). */
export interface RawQueryClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

function quoted(name: string, what: string): string {
  const parts = name.split('.');
  if (parts.some((p) => !IDENTIFIER.test(p))) throw new TypeError(`@keyset/prisma: ${what} ${JSON.stringify(name)} is not a plain SQL name (letters, digits, _; schema.table)`);
  return parts.map((p) => `"${p}"`).join('.');
}

/** A column, quoted: the last part of a qualified name (`o.created_at` → `"created_at"`). */
function columnOf(name: string): string {
  return quoted(name.split('.').pop()!, 'column');
}

/** Throws `TypeError` for a table name that is not `name` or `schema.name`. */
export function checkTable(table: string): void {
  quoted(table, 'table');
}

/** Throws `TypeError` for a column name that is not plain. */
export function checkColumn(column: string): void {
  columnOf(column);
}

/**
 * For each value of the `unique` key (as text) among `keys`, the ISO 8601 text of every
 * column of `stamps` (null where the row holds none). A row deleted since the page was read is absent.
 */
export async function readExactTimestamps(
  client: RawQueryClient,
  table: string,
  unique: SortKey,
  stamps: readonly TimestampColumn[],
  keys: readonly string[],
): Promise<Map<string, (string | null)[]>> {
  const id = columnOf(unique.column ?? unique.key);
  const columns = stamps.map((stamp, i) => {
    const c = columnOf(stamp.column);
    // `timestamp` without a zone is UTC to Prisma; `timestamptz` is printed in UTC.
    return `CASE WHEN pg_typeof(${c}) = 'timestamp without time zone'::regtype THEN to_char(${c}::timestamp, ${FORMAT}) ELSE to_char(${c}::timestamptz AT TIME ZONE 'UTC', ${FORMAT}) END AS t${i}`;
  });
  // One untyped parameter per value: PostgreSQL types each from the column (bigint, uuid, text).
  const list = keys.map((_, i) => `$${i + 1}`).join(', ');
  const text = `SELECT ${id}::text AS k, ${columns.join(', ')} FROM ${quoted(table, 'table')} WHERE ${id} IN (${list})`;
  const rows = await client.$queryRawUnsafe<Record<string, string | null>[]>(text, ...keys);
  return new Map(rows.map((r) => [String(r['k']), stamps.map((_, i) => r[`t${i}`] ?? null)]));
}
