import { defineSortSpec, type PagePlan } from '@keyset/core';
import Database from 'better-sqlite3';
import {
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteDialect,
  type Dialect,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import { countRows } from './count-rows.ts';
import { keysetPage } from './keyset-page.ts';

interface DB {
  orders: { id: string; created_at: string; status: string; note: string | null };
  customers: { id: string; name: string };
}

const compileOnly = (dialect: 'postgres' | 'mysql'): Dialect => ({
  createAdapter: () => (dialect === 'postgres' ? new PostgresAdapter() : new MysqlAdapter()),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => (dialect === 'postgres' ? new PostgresIntrospector(db) : new MysqlIntrospector(db)),
  createQueryCompiler: () => (dialect === 'postgres' ? new PostgresQueryCompiler() : new MysqlQueryCompiler()),
});
const pgDb = new Kysely<DB>({ dialect: compileOnly('postgres') });
const myDb = new Kysely<DB>({ dialect: compileOnly('mysql') });

const T = '2024-05-01 10:00:00.123456+00';
// A hand-built plan without `sort`: keysetWhere then trusts the spec it is given (a
// paginator's plan carries its sort, and a different spec is refused).
const cursor = (after: PagePlan extends infer P ? (P extends { after: infer A } ? A : never) : never, limit = 20): PagePlan =>
  ({ mode: 'cursor', limit, take: limit + 1, direction: 'forward', after, fingerprint: 'fp' }) as Omit<PagePlan & { mode: 'cursor' }, 'sort'> as PagePlan;
const mixed = defineSortSpec([
  { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', column: 'o.id', dir: 'asc', type: 'bigint', unique: true },
]);

describe('keysetPage', () => {
  it('PostgreSQL: the filter and the keyset condition are ANDed; one parameter per value, ORDER BY, LIMIT take', () => {
    const q = keysetPage(pgDb.selectFrom('orders as o').select('o.id').where('o.status', '=', 'paid'), cursor([T, '9007199254740993']), mixed, 'postgres');
    const { sql, parameters } = q.compile();
    expect(sql).toBe(
      'select "o"."id", CAST("o"."created_at" AS text) as "keyset_sort_0", CAST("o"."id" AS text) as "keyset_sort_1" from "orders" as "o" where "o"."status" = $1 and (("o"."created_at" <= $2::timestamptz AND ("o"."created_at" < $3::timestamptz OR ("o"."created_at" = $4::timestamptz AND "o"."id" > $5::bigint)))) order by "o"."created_at" DESC, "o"."id" ASC limit $6',
    );
    expect(parameters).toEqual(['paid', T, T, T, '9007199254740993', 21]);
  });

  it('MySQL: backticks, exact casts, UTC DATETIME(6) values', () => {
    const { sql, parameters } = keysetPage(myDb.selectFrom('orders as o').select('o.id'), cursor([T, '7']), mixed, 'mysql').compile();
    expect(sql).toBe(
      'select `o`.`id`, CAST(`o`.`created_at` AS CHAR) as `keyset_sort_0`, CAST(`o`.`id` AS CHAR) as `keyset_sort_1` from `orders` as `o` where ((`o`.`created_at` <= CAST(? AS DATETIME(6)) AND (`o`.`created_at` < CAST(? AS DATETIME(6)) OR (`o`.`created_at` = CAST(? AS DATETIME(6)) AND `o`.`id` > CAST(? AS DECIMAL(65,0)))))) order by `o`.`created_at` DESC, `o`.`id` ASC limit ?',
    );
    expect(parameters).toEqual(['2024-05-01 10:00:00.123456', '2024-05-01 10:00:00.123456', '2024-05-01 10:00:00.123456', '7', 21]);
  });

  it('first page and offset 0: no condition, ORDER BY and LIMIT take only (and a cursor page\'s exact sort values)', () => {
    expect(keysetPage(pgDb.selectFrom('orders as o').select('o.id'), cursor(null), mixed, 'postgres').compile().sql).toBe(
      'select "o"."id", CAST("o"."created_at" AS text) as "keyset_sort_0", CAST("o"."id" AS text) as "keyset_sort_1" from "orders" as "o" order by "o"."created_at" DESC, "o"."id" ASC limit $1',
    );
    const first: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 0, sort: mixed, fingerprint: 'fp' };
    const { sql, parameters } = keysetPage(pgDb.selectFrom('orders as o').select('o.id'), first, mixed, 'postgres').compile();
    expect(sql).toBe('select "o"."id" from "orders" as "o" order by "o"."created_at" DESC, "o"."id" ASC limit $1');
    expect(parameters).toEqual([11]);
  });

  it('offset mode past the first row: a deferred join on the unique key, the filters in the subquery and the query, ordered the same', () => {
    const offset: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 30, sort: mixed, fingerprint: 'fp' };
    const paid = pgDb.selectFrom('orders as o').select(['o.id', 'o.note']).where('o.status', '=', 'paid');
    const { sql, parameters } = keysetPage(paid, offset, mixed, 'postgres').compile();
    expect(sql).toBe(
      'select "o"."id", "o"."note" from "orders" as "o" inner join (select "o"."id" as "keyset_key" from "orders" as "o" where "o"."status" = $1 order by "o"."created_at" DESC, "o"."id" ASC limit $2 offset $3) as "keyset_page" on "o"."id" = "keyset_page"."keyset_key" where "o"."status" = $4 order by "o"."created_at" DESC, "o"."id" ASC',
    );
    expect(parameters).toEqual(['paid', 11, 30, 'paid']);
    const mysql = keysetPage(myDb.selectFrom('orders as o').select('o.id'), offset, mixed, 'mysql').compile();
    expect(mysql.sql).toBe(
      'select `o`.`id` from `orders` as `o` inner join (select `o`.`id` as `keyset_key` from `orders` as `o` order by `o`.`created_at` DESC, `o`.`id` ASC limit ? offset ?) as `keyset_page` on `o`.`id` = `keyset_page`.`keyset_key` order by `o`.`created_at` DESC, `o`.`id` ASC',
    );
  });

  it('offset mode on SQLite: the plain OFFSET (SQLite skips the rows in the index already; its planner would drive the join from the outer table)', async () => {
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    try {
      const offset: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 30, sort: mixed, fingerprint: 'fp' };
      const { sql, parameters } = keysetPage(db.selectFrom('orders as o').select('o.id'), offset, mixed, 'sqlite').compile();
      expect(sql).toBe('select "o"."id" from "orders" as "o" order by "o"."created_at" DESC, "o"."id" ASC limit ? offset ?');
      expect(parameters).toEqual([11, 30]);
    } finally {
      await db.destroy();
    }
  });

  it('refuses a plan that does not fit the spec and a bad spec, as keysetWhere does', () => {
    expect(() => keysetPage(pgDb.selectFrom('orders').select('id'), cursor(['yesterday', '1']), mixed, 'postgres')).toThrow(TypeError);
    expect(() => keysetPage(pgDb.selectFrom('orders').select('id'), cursor(null), [{ key: 'id', dir: 'asc', type: 'bigint' }], 'postgres')).toThrow(
      /unique/,
    );
  });

  it('checks literal sort columns against the query tables at compile time', () => {
    const base = pgDb.selectFrom('orders as o').select('o.id');
    const ok = keysetPage(base, cursor(null), [
      { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ], 'postgres');
    expect(ok.compile().sql).toContain('order by "o"."created_at" DESC, "id" DESC');
    // A table the query does not select from, a misspelt column, a key that is no column:
    expect(() =>
      keysetPage(base, cursor(null), [
        // @ts-expect-error customers is not in this query
        { key: 'name', column: 'customers.name', dir: 'asc', type: 'string' },
        { key: 'id', dir: 'desc', type: 'bigint', unique: true },
      ], 'postgres'),
    ).not.toThrow();
    keysetPage(base, cursor(null), [
      // @ts-expect-error no column created_on
      { key: 'createdAt', column: 'o.created_on', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ], 'postgres');
    keysetPage(base, cursor(null), [
      // @ts-expect-error key createdAt is not a column: say which column it sorts by
      { key: 'createdAt', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'bigint', unique: true },
    ], 'postgres');
    // A spec typed as plain strings (a Paginator's `sort`) is checked at run time instead.
    expect(keysetPage(base, cursor(null), mixed, 'postgres').compile().sql).toContain('order by');
  });
});

describe('countRows', () => {
  it('counts what the filtered query selects, ignoring its order, limit and offset; group by counts groups', async () => {
    const sqlite = new Database(':memory:');
    sqlite.exec(`CREATE TABLE orders (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, status TEXT NOT NULL, note TEXT);
      INSERT INTO orders VALUES ('1', 'a', 'paid', NULL), ('2', 'b', 'paid', 'x'), ('3', 'c', 'open', NULL), ('4', 'd', 'paid', 'x');`);
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
    try {
      const paid = db.selectFrom('orders').selectAll().where('status', '=', 'paid');
      expect(await countRows(db, paid)).toBe(3);
      expect(await countRows(db, paid.orderBy('id').limit(1).offset(1))).toBe(3);
      expect(await countRows(db, db.selectFrom('orders').select('note').groupBy('note'))).toBe(2);
    } finally {
      await db.destroy();
    }
  });
});
