/**
 * A deep page built by keysetPage is served by the sort index on both real servers:
 * PostgreSQL plans an Index Scan whose Index Cond carries the cursor, MariaDB/MySQL a
 * range scan of the index without filesort. 20k rows, ANALYZEd, no planner settings.
 */
import { defineSortSpec, type PagePlan, type SortSpec } from '@keyset/core';
import { mysqlUrl, postgresUrl, uniqueSchema } from '@keyset/test-support';
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, MYSQL_OPTIONS } from '../../core/src/pagination/mysql.test-support.ts';
import { keysetPage } from './keyset-page.ts';

interface DB {
  orders: { id: string; created_at: string; customer: string };
}

const newestFirst = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'bigint', unique: true },
]);
const mixed = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'asc', type: 'bigint', unique: true },
]);
// Three quarters down the newest-first walk of 20k rows (three per timestamp).
// Hand-built (no `sort`): keysetWhere trusts the spec each EXPLAIN passes.
const deep = (after: string[]): PagePlan =>
  ({ mode: 'cursor', limit: 20, take: 21, direction: 'forward', after, fingerprint: 'fp' }) as Omit<PagePlan & { mode: 'cursor' }, 'sort'> as PagePlan;

const pgUrl = await postgresUrl();
const myUrl = await mysqlUrl();

describe.skipIf(pgUrl === undefined)('keysetPage on PostgreSQL: EXPLAIN', () => {
  const schema = uniqueSchema('keyset_kysely_explain');
  let db: Kysely<DB>;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: pgUrl, max: 1, options: `-c search_path=${schema}` }) }) });
    await sql
      .raw(
        `CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, customer text NOT NULL);
         INSERT INTO orders SELECT 9007199254740000 + g, timestamptz '2024-05-01 00:00:00+00' + (g / 3) * interval '1.000001 second', 'c' || (g % 97)
           FROM generate_series(1, 20000) AS g;
         CREATE INDEX orders_newest ON orders (created_at DESC, id DESC);
         CREATE INDEX orders_newest_id_asc ON orders (created_at DESC, id ASC);
         ANALYZE orders;`,
      )
      .execute(db);
  }, 60_000);

  afterAll(async () => {
    await db.schema.dropSchema(schema).cascade().execute();
    await db.destroy();
  });

  interface PlanNode {
    'Node Type': string;
    'Index Name'?: string;
    'Index Cond'?: string;
    Plans?: PlanNode[];
  }
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  async function explain(sort: SortSpec): Promise<PlanNode[]> {
    const rows = await keysetPage(db.selectFrom('orders').select(['id', 'created_at']), deep(['2024-05-01 00:27:46.669332+00', '9007199254745001']), sort, 'postgres').explain('json');
    return nodes((rows[0] as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
  }

  it.each([
    ['one direction (row values)', newestFirst, 'orders_newest', /ROW\(created_at, id\) < ROW\(/],
    ['mixed directions (OR-expansion, leading bound)', mixed, 'orders_newest_id_asc', /created_at <= /],
  ] as const)('%s: an Index Scan of the sort index bounded by the cursor', async (_, sort, index, cond) => {
    const plan = await explain(sort);
    const scan = plan.find((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scan, JSON.stringify(plan)).toBeDefined();
    expect(scan!['Index Name']).toBe(index);
    expect(scan!['Index Cond']).toMatch(cond);
    expect(plan.some((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Seq Scan')).toBe(false);
  });
});

describe.skipIf(myUrl === undefined)('keysetPage on MySQL/MariaDB: EXPLAIN', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Kysely<DB>;

  beforeAll(async () => {
    database = await createTestDatabase(myUrl!, 'keyset_kysely_explain');
    db = new Kysely<DB>({ dialect: new MysqlDialect({ pool: createPool({ uri: database.url, connectionLimit: 1, ...MYSQL_OPTIONS }) }) });
    await sql.raw('CREATE TABLE orders (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, customer VARCHAR(20) NOT NULL)').execute(db);
    const digits = 'SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9';
    await sql
      .raw(
        `INSERT INTO orders
           SELECT 9007199254740000 + g, TIMESTAMP '2024-05-01 00:00:00' + INTERVAL (g DIV 3) * 1000001 MICROSECOND, CONCAT('c', g MOD 97)
             FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 1 AS g
                     FROM (${digits}) a, (${digits}) b, (${digits}) c, (${digits}) e, (SELECT 0 d UNION ALL SELECT 1) f) g`,
      )
      .execute(db);
    await sql.raw('CREATE INDEX orders_newest ON orders (created_at DESC, id DESC)').execute(db);
    await sql.raw('CREATE INDEX orders_newest_id_asc ON orders (created_at DESC, id ASC)').execute(db);
    await sql.raw('ANALYZE TABLE orders').execute(db);
  }, 60_000);

  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  it.each([
    ['one direction', newestFirst, 'orders_newest'],
    ['mixed directions', mixed, 'orders_newest_id_asc'],
  ] as const)('%s: a range scan of the sort index, no filesort', async (_, sort, index) => {
    const rows = await keysetPage(db.selectFrom('orders').select(['id', 'created_at']), deep(['2024-05-01 00:27:46.669332', '9007199254745001']), sort, 'mysql').explain('json');
    const text = Object.values(rows[0] as Record<string, string>)[0]!;
    const tables: { access_type?: string; key?: string }[] = [];
    JSON.parse(text, (key, value: unknown) => {
      if (key === 'table' && typeof value === 'object' && value !== null) tables.push(value as { access_type?: string; key?: string });
      return value;
    });
    expect(tables, text).toHaveLength(1);
    expect(tables[0]!.access_type, text).toBe('range');
    expect(tables[0]!.key, text).toBe(index);
    expect(text).not.toMatch(/filesort/);
  });
});
