/**
 * Walking a connection over a real SQLite table (better-sqlite3, through `keysetPage` of
 * @keyset/kysely) with rows inserted and deleted between pages: forward with first/after
 * and backward with last/before, every row present throughout appears exactly once and in
 * the sort order, and no row appears twice.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { Kysely, SqliteDialect } from 'kysely';
import { createPaginator, type SortKey } from '@keyset/core';
import { keysetPage } from '@keyset/kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connection, planConnection, type Connection } from './index.ts';

interface OrdersTable {
  id: number;
  label: string | null;
  grp: number;
}
interface DB {
  orders: OrdersTable;
}
type Row = OrdersTable;

// Heavy ties on the leading keys, nulls on the first: the tie-breaker carries the walk.
const SORT = [
  { key: 'label', dir: 'asc', type: 'string', nullable: { nulls: 'first' } },
  { key: 'grp', dir: 'desc', type: 'int' },
  { key: 'id', dir: 'asc', type: 'int', unique: true },
] as const satisfies readonly SortKey[];
const LABELS = [null, 'a', 'b', 'c'];

const orders = createPaginator<Row>({ endpoint: 'Query.orders', sort: SORT, limits: { max: 50 }, cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] } });
let db: Kysely<DB>;

beforeAll(() => {
  const sqlite = new Database(':memory:');
  sqlite.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, label TEXT, grp INTEGER NOT NULL)');
  db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
});
afterAll(async () => {
  await db?.destroy();
});

async function fetchPage(args: { first?: number; after?: string | null; last?: number; before?: string | null }): Promise<Connection<Row>> {
  const plan = await planConnection(orders, args);
  const rows = await keysetPage(db.selectFrom('orders').selectAll(), plan, SORT, 'sqlite').execute();
  return connection(orders, plan, rows);
}

/** The sort order, spelled out independently of the library. */
function reference(a: Row, b: Row): number {
  const rank = (l: string | null) => (l === null ? -1 : LABELS.indexOf(l));
  return rank(a.label) - rank(b.label) || b.grp - a.grp || a.id - b.id;
}

const rowArb = fc.record({ label: fc.constantFrom(...LABELS), grp: fc.integer({ min: 0, max: 2 }) });
const writeArb = fc.record({ inserts: fc.array(rowArb, { maxLength: 3 }), deletes: fc.array(fc.nat(), { maxLength: 3 }) });

async function walk(direction: 'forward' | 'backward', initial: { label: string | null; grp: number }[], size: number, writes: { inserts: { label: string | null; grp: number }[]; deletes: number[] }[]): Promise<void> {
  await db.deleteFrom('orders').execute();
  let nextId = 1;
  const insert = async (rows: { label: string | null; grp: number }[]) => {
    for (const r of rows) await db.insertInto('orders').values({ id: nextId++, ...r }).execute();
  };
  await insert(initial);
  const start = await db.selectFrom('orders').selectAll().execute();
  const deleted = new Set<number>();
  const seen: Row[] = [];
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    const page: Connection<Row> = direction === 'forward' ? await fetchPage({ first: size, after: cursor }) : await fetchPage({ last: size, before: cursor });
    const nodes = page.edges.map((e) => e.node);
    expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
    expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
    // Edges in the sort order in both directions; pages arrive front to back, or back to front.
    seen.push(...(direction === 'forward' ? nodes : []));
    if (direction === 'backward') seen.unshift(...nodes);
    const more = direction === 'forward' ? page.pageInfo.hasNextPage : page.pageInfo.hasPreviousPage;
    if (!more) break;
    cursor = (direction === 'forward' ? page.pageInfo.endCursor : page.pageInfo.startCursor)!;
    // Writes between the first pages only: a walk that met an insert past its end on
    // every page would never end.
    const w = writes[i];
    if (w !== undefined) {
      await insert(w.inserts);
      const present = await db.selectFrom('orders').select('id').execute();
      for (const d of w.deletes) {
        if (present.length === 0) break;
        const id = present[d % present.length]!.id;
        await db.deleteFrom('orders').where('id', '=', id).execute();
        deleted.add(id);
      }
    }
    expect(i).toBeLessThan(1000);
  }
  const ids = seen.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...seen].sort(reference)).toEqual(seen);
  const throughout = start.filter((r) => !deleted.has(r.id)).map((r) => r.id);
  const got = new Set(ids);
  expect(throughout.filter((id) => !got.has(id))).toEqual([]);
}

describe('a connection over SQLite through keysetPage, with inserts and deletes between pages', () => {
  const args = [fc.array(rowArb, { maxLength: 25 }), fc.integer({ min: 1, max: 6 }), fc.array(writeArb, { maxLength: 6 })] as const;
  it('forward (first/after): every row present throughout once, in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...args, (initial, size, writes) => walk('forward', initial, size, writes)), { numRuns: 60 }), 120_000);
  it('backward (last/before): every row present throughout once, edges in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...args, (initial, size, writes) => walk('backward', initial, size, writes)), { numRuns: 60 }), 120_000);
});
