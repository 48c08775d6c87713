/**
 * MySQL/MariaDB fixtures for the walk properties: a throwaway database per test file,
 * the `items` table in MySQL types, and a `WalkSource` for raw `keysetWhere` SQL.
 * The driver options are the ones a keyset user needs: `dateStrings` (a `Date` would
 * drop DATETIME(6)'s microseconds), `bigNumberStrings` (BIGINT past 2^53 as exact
 * text); DECIMAL comes as text by default.
 * Test fixture only: not exported, not built.
 * @module
 */
import { uniqueSchema } from '@keyset/test-support';
import mysql from 'mysql2/promise';
import { timestampText, type WalkSource } from './dialect-walks.test-support.ts';
import { keysetWhere } from './keyset-where.ts';
import type { PagePlan, SortSpec } from './types.ts';
import type { Item } from './walk.test-support.ts';

/** Connection options every keyset user on mysql2 needs. */
export const MYSQL_OPTIONS = { dateStrings: true, supportBigNumbers: true, bigNumberStrings: true } as const;

/** `label` is binary-collated: byte order = JS order for the ASCII fixtures. */
export const MYSQL_ITEMS_DDL = `
  CREATE TABLE items (
    id BIGINT PRIMARY KEY,
    tenant INT NOT NULL,
    created_at DATETIME(6) NOT NULL,
    grp INT NOT NULL,
    score DECIMAL(20, 2) NULL,
    label VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    flag BOOLEAN NOT NULL
  )`;

/** A fresh database on the server at `url`; `drop()` removes it. */
export async function createTestDatabase(url: string, prefix: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = uniqueSchema(prefix);
  const admin = await mysql.createConnection({ uri: url });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    name,
    url: own.href,
    async drop() {
      const c = await mysql.createConnection({ uri: url });
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
      } finally {
        await c.end();
      }
    },
  };
}

/** `items` rows as a MySQL INSERT's values, exact for BIGINT ids past 2^53. */
export function mysqlItemValues(items: readonly Item[], tenant: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const tuples = items.map((it) => {
    params.push(it.id, tenant, timestampText(it.createdAt, 'mysql'), it.grp, it.score, it.label, it.flag);
    return '(CAST(? AS SIGNED), ?, ?, ?, ?, ?, ?)';
  });
  return { sql: `INSERT INTO items (id, tenant, created_at, grp, score, label, flag) VALUES ${tuples.join(', ')}`, params };
}

/** A database row (`flag` 0/1) as the paginator reads it. */
export function mysqlRowToItem(row: Record<string, unknown>): Item {
  return { ...(row as unknown as Item), id: String(row.id), flag: Boolean(row.flag) };
}

/**
 * The walk through raw `keysetWhere` SQL. With `textColumns`, the SQL hands over BIGINT
 * and DATETIME(6) as text itself (`CAST(… AS CHAR)`, docs/pagination.md's recipe), so the
 * connection needs none of `MYSQL_OPTIONS`: mysql2 at its defaults.
 */
export function rawMysqlSource(db: mysql.Connection, textColumns = false): WalkSource {
  const columns = textColumns
    ? 'CAST(t.id AS CHAR) AS id, CAST(t.created_at AS CHAR) AS createdAt, t.grp, t.score, t.label, t.flag'
    : 't.id, t.created_at AS createdAt, t.grp, t.score, t.label, t.flag';
  return {
    async clear() {
      await db.query('DELETE FROM items');
    },
    async insert(items, tenant) {
      const { sql, params } = mysqlItemValues(items, tenant);
      await db.query(sql, params);
    },
    async remove(id) {
      await db.query('DELETE FROM items WHERE id = CAST(? AS SIGNED)', [id]);
    },
    async fetch(plan: PagePlan, sort: SortSpec) {
      const k = keysetWhere(plan, sort, 'mysql');
      const [rows] = await db.query(
        `SELECT ${columns} FROM items t
          WHERE t.tenant = ? AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit} OFFSET ${k.offset}`,
        [1, ...k.params],
      );
      return (rows as Record<string, unknown>[]).map(mysqlRowToItem);
    },
    async count() {
      const [rows] = await db.query('SELECT count(*) AS n FROM items WHERE tenant = 1');
      return Number((rows as { n: string }[])[0]!.n);
    },
  };
}
