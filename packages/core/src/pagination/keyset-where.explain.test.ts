/**
 * The keyset predicate is sargable: on real PostgreSQL with ~20k rows, ANALYZEd, the
 * page query is an Index Scan whose Index Cond carries the cursor bound, for both the
 * row-value form (one direction) and the OR-expansion with its leading range bound
 * (mixed directions). No planner settings are changed.
 */
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetWhere } from './keyset-where.ts';
import { defineSortSpec } from './sort-spec.ts';
import type { PagePlan, SortSpec } from './types.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_explain');
let db: pg.Client;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

async function explain(sort: SortSpec, after: readonly (string | number)[]): Promise<PlanNode[]> {
  const plan: PagePlan = { mode: 'cursor', limit: 20, take: 21, direction: 'forward', after, sort, fingerprint: 'fp' };
  const k = keysetWhere(plan, sort, 'postgres');
  const { rows } = await db.query(
    `EXPLAIN (FORMAT JSON) SELECT id, created_at FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`,
    k.params,
  );
  return nodes((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
}

beforeAll(async () => {
  if (url === undefined) return;
  db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`SET search_path TO ${schema}`);
  await db.query(`
    CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, customer text NOT NULL);
    -- 20k rows, three per microsecond-distinct timestamp: ties on the leading key.
    INSERT INTO orders
      SELECT 9007199254740000 + g, timestamptz '2024-05-01 00:00:00+00' + (g / 3) * interval '1.000001 second', 'c' || (g % 97)
        FROM generate_series(1, 20000) AS g;
    CREATE INDEX orders_newest ON orders (created_at DESC, id DESC);
    CREATE INDEX orders_newest_id_asc ON orders (created_at DESC, id ASC);
    ANALYZE orders;`);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
});

describe.skipIf(url === undefined)('keysetWhere on PostgreSQL: EXPLAIN', () => {
  const middle = ['2024-05-01 00:55:33.003333+00', '9007199254750000'];

  it('row-value form (created_at DESC, id DESC) is an Index Scan bounded by the cursor', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    const plan = await explain(sort, middle);
    const scan = plan.find((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scan, JSON.stringify(plan)).toBeDefined();
    expect(scan!['Index Name']).toBe('orders_newest');
    // The cursor bound is an index condition (a range start), not a filter over scanned rows.
    expect(scan!['Index Cond']).toMatch(/ROW\(created_at, id\) < ROW\(/);
    expect(plan.some((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Seq Scan')).toBe(false);
  });

  it('OR-expansion (created_at DESC, id ASC) is an Index Scan with the leading range bound as Index Cond', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    const plan = await explain(sort, middle);
    const scan = plan.find((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Index Only Scan');
    expect(scan, JSON.stringify(plan)).toBeDefined();
    expect(scan!['Index Name']).toBe('orders_newest_id_asc');
    expect(scan!['Index Cond']).toMatch(/created_at <= /);
    expect(plan.some((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Seq Scan')).toBe(false);
  });

  it('the page it selects is the one after the cursor', async () => {
    const sort = defineSortSpec([
      { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    const k = keysetWhere({ mode: 'cursor', limit: 2, take: 3, direction: 'forward', after: middle, sort, fingerprint: 'fp' }, sort, 'postgres');
    const { rows } = await db.query(
      `SELECT id::text AS id, created_at::text AS created_at FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`,
      k.params,
    );
    expect(rows.every((r: { created_at: string }) => r.created_at <= middle[0]!)).toBe(true);
    expect(rows).toHaveLength(3);
  });
});
