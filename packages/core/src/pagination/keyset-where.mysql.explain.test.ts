/**
 * The MySQL/MariaDB keyset predicate is sargable: on a real server with 20k rows, a
 * deep page is a `range` scan of the sort index (bounded by the cursor's leading key),
 * read in index order: no full scan, no filesort. Both the one-direction spec and the
 * mixed one take the OR-expansion with its leading range bound.
 */
import { mysqlUrl } from '@keyset/test-support';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetWhere } from './keyset-where.ts';
import { createTestDatabase, MYSQL_OPTIONS } from './mysql.test-support.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { PagePlan, SortSpec } from './types.ts';

const url = await mysqlUrl();
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: mysql.Connection;

interface TableNode {
  table_name?: string;
  access_type?: string;
  key?: string;
}

/** Every `table` node of MariaDB's or MySQL's EXPLAIN FORMAT=JSON, and the whole text. */
async function explain(
  sort: SortSpec,
  after: readonly (string | number)[],
  direction: 'forward' | 'backward' = 'forward',
): Promise<{ tables: TableNode[]; text: string }> {
  const plan: PagePlan = { mode: 'cursor', limit: 20, take: 21, direction, after, sort, fingerprint: 'fp' };
  const k = keysetWhere(plan, sort, 'mysql');
  const [rows] = await db.query(`EXPLAIN FORMAT=JSON SELECT id, created_at FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`, k.params);
  const text = Object.values((rows as Record<string, string>[])[0]!)[0]!;
  const tables: TableNode[] = [];
  JSON.parse(text, (key, value: unknown) => {
    if (key === 'table' && typeof value === 'object' && value !== null) tables.push(value as TableNode);
    return value;
  });
  return { tables, text };
}

beforeAll(async () => {
  if (url === undefined) return;
  database = await createTestDatabase(url, 'keyset_explain');
  db = await mysql.createConnection({ uri: database.url, ...MYSQL_OPTIONS, multipleStatements: true });
  await db.query(`
    CREATE TABLE orders (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, customer VARCHAR(20) NOT NULL);
    -- 20k rows, three per microsecond-distinct timestamp: ties on the leading key.
    INSERT INTO orders
      SELECT 9007199254740000 + g, TIMESTAMP '2024-05-01 00:00:00' + INTERVAL (g DIV 3) * 1000001 MICROSECOND, CONCAT('c', g MOD 97)
        FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 1 AS g
                FROM (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) a,
                     (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) b,
                     (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) c,
                     (SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) e,
                     (SELECT 0 d UNION ALL SELECT 1) f) digits;
    CREATE INDEX orders_newest ON orders (created_at DESC, id DESC);
    CREATE INDEX orders_newest_id_asc ON orders (created_at DESC, id ASC);
    ANALYZE TABLE orders;`);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.end();
  await database.drop();
});

describe.skipIf(url === undefined)("keysetWhere(…, 'mysql') on MySQL/MariaDB: EXPLAIN", () => {
  // Three quarters down the newest-first walk: a deep page.
  const deep = ['2024-05-01 00:27:46.669332', '9007199254745001'];

  it('(created_at DESC, id DESC): a range scan of the sort index, no filesort', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    const { tables, text } = await explain(sort, deep);
    expect(tables, text).toHaveLength(1);
    expect(tables[0]!.access_type, text).toBe('range');
    expect(tables[0]!.key, text).toBe('orders_newest');
    expect(text).not.toMatch(/filesort/);
  });

  it('(created_at DESC, id ASC): the leading bound makes it a range scan of the matching index', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    const { tables, text } = await explain(sort, deep);
    expect(tables[0]!.access_type, text).toBe('range');
    expect(tables[0]!.key, text).toBe('orders_newest_id_asc');
    expect(text).not.toMatch(/filesort/);
  });

  it('a backward page (prevCursor) is a range scan of the same index read the other way, no filesort', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    const { tables, text } = await explain(sort, deep, 'backward');
    expect(tables[0]!.access_type, text).toBe('range');
    expect(tables[0]!.key, text).toBe('orders_newest');
    expect(text).not.toMatch(/filesort/);
  });

  it('the deep page it selects is the one after the cursor', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    const k = keysetWhere({ mode: 'cursor', limit: 2, take: 3, direction: 'forward', after: deep, sort, fingerprint: 'fp' }, sort, 'mysql');
    const [rows] = await db.query(`SELECT id, created_at FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`, k.params);
    const [expected] = await db.query(
      `SELECT id, created_at FROM orders WHERE created_at < ? OR (created_at = ? AND id < ?) ORDER BY created_at DESC, id DESC LIMIT 3`,
      [deep[0], deep[0], 9007199254745001n],
    );
    expect(rows).toEqual(expected);
    expect(rows).toHaveLength(3);
  });
});
