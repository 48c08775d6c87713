import { ConfigError, defineSortSpec, type PagePlan } from '@keyset/core';
import Database from 'better-sqlite3';
import { and, eq } from 'drizzle-orm';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { drizzle as mysqlDrizzle } from 'drizzle-orm/mysql2';
import * as my from 'drizzle-orm/mysql-core';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import * as pg from 'drizzle-orm/pg-core';
import * as lite from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { countRows } from './count-rows.ts';
import { keysetPage } from './keyset-page.ts';

const pgOrders = pg.pgTable('orders', {
  id: pg.bigint('id', { mode: 'bigint' }).primaryKey(),
  createdAt: pg.timestamp('created_at', { withTimezone: true, mode: 'string', precision: 6 }).notNull(),
  status: pg.text('status').notNull(),
});
const myOrders = my.mysqlTable('orders', {
  id: my.bigint('id', { mode: 'bigint' }).primaryKey(),
  createdAt: my.datetime('created_at', { mode: 'string', fsp: 6 }).notNull(),
  status: my.varchar('status', { length: 10 }).notNull(),
});
const liteOrders = lite.sqliteTable('orders', {
  id: lite.integer('id').primaryKey(),
  createdAt: lite.text('created_at').notNull(),
  status: lite.text('status').notNull(),
});

const T = '2024-05-01 10:00:00.123456+00';
// A hand-built plan without `sort`: keysetWhere then trusts the spec it is given (a
// paginator's plan carries its sort, and a different spec is refused).
const cursor = (after: readonly (string | number | null)[] | null): PagePlan =>
  ({ mode: 'cursor', limit: 20, take: 21, direction: 'forward', after, fingerprint: 'fp' }) as Omit<PagePlan & { mode: 'cursor' }, 'sort'> as PagePlan;
const mixed = defineSortSpec([
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'asc', type: 'bigint', unique: true },
]);

// Query builders only: nothing here reaches a server (`toSQL()` compiles).
const pgDb = pgDrizzle.mock();
const myDb = mysqlDrizzle.mock();

describe('keysetPage (Drizzle)', () => {
  it('pg-core: the condition ANDs with the filter, one bound parameter per mention, ORDER BY list, LIMIT take', () => {
    const page = keysetPage(pgOrders, cursor([T, '9007199254740993']), mixed);
    const q = pgDb
      .select({ id: pgOrders.id })
      .from(pgOrders)
      .where(and(eq(pgOrders.status, 'paid'), page.where))
      .orderBy(...page.orderBy)
      .limit(page.limit)
      .offset(page.offset)
      .toSQL();
    expect(q.sql).toBe(
      'select "id" from "orders" where ("orders"."status" = $1 and (("created_at" <= $2::timestamptz AND ("created_at" < $3::timestamptz OR ("created_at" = $4::timestamptz AND "id" > $5::bigint))))) order by "created_at" DESC, "id" ASC limit $6',
    );
    expect(q.params).toEqual(['paid', T, T, T, '9007199254740993', 21]);
  });

  it('mysql-core: backticks, exact casts, NULL placement emulated only where MySQL disagrees', () => {
    const spec = defineSortSpec([
      { key: 'status', dir: 'asc', type: 'string', nullable: { nulls: 'last' } },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    const page = keysetPage(myOrders, cursor(['paid', '7']), spec);
    const q = myDb.select({ id: myOrders.id }).from(myOrders).where(page.where).orderBy(...page.orderBy).limit(page.limit).toSQL();
    expect(q.sql).toBe(
      'select `id` from `orders` where (((`status` >= ? OR `status` IS NULL) AND ((`status` > ? OR `status` IS NULL) OR (`status` = ? AND `id` > CAST(? AS DECIMAL(65,0)))))) order by `status` IS NULL ASC, `status` ASC, `id` ASC limit ?',
    );
    expect(q.params).toEqual(['paid', 'paid', 'paid', '7', 21]);
  });

  it('offset mode with { db, where }: past the first row a deferred join on the unique key, the filters in the subquery and the query, OFFSET 0', () => {
    const offset: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 30, sort: mixed, fingerprint: 'fp' };
    const paid = eq(pgOrders.status, 'paid');
    const page = keysetPage(pgOrders, offset, mixed, { db: pgDb, where: paid });
    expect(page).toMatchObject({ limit: 11, offset: 0 });
    const q = pgDb.select({ id: pgOrders.id }).from(pgOrders).where(page.where).orderBy(...page.orderBy).limit(page.limit).offset(page.offset).toSQL();
    expect(q.sql).toBe(
      'select "id" from "orders" where ("orders"."status" = $1 and "id" in (select "keyset_key" from (select "keyset_key" from (select "id" as "keyset_key" from "orders" where "orders"."status" = $2 order by "created_at" DESC, "id" ASC limit $3 offset $4) "keyset_keys" limit $5) "keyset_page")) order by "created_at" DESC, "id" ASC limit $6',
    );
    expect(q.params).toEqual(['paid', 'paid', 11, 30, 11, 11]);
    const my0 = keysetPage(myOrders, offset, mixed, { db: myDb });
    expect(myDb.select({ id: myOrders.id }).from(myOrders).where(my0.where).orderBy(...my0.orderBy).toSQL().sql).toBe(
      'select `id` from `orders` where `id` in (select `keyset_key` from (select `keyset_key` from (select `id` as `keyset_key` from `orders` order by `created_at` DESC, `id` ASC limit ? offset ?) `keyset_keys` limit ?) `keyset_page`) order by `created_at` DESC, `id` ASC',
    );
    // SQLite: the plain OFFSET with the filters ANDed (it skips the rows in the index already).
    const lite0 = keysetPage(liteOrders, offset, mixed, { db: sqliteDrizzle.mock(), where: eq(liteOrders.status, 'paid') });
    expect(lite0).toMatchObject({ limit: 11, offset: 30 });
    expect(sqliteDrizzle.mock().select({ id: liteOrders.id }).from(liteOrders).where(lite0.where).toSQL().sql).toBe('select "id" from "orders" where "orders"."status" = ?');
    // Options without a database, or with a misspelt name, are a ConfigError (a lost `where` would drop the filters).
    expect(() => keysetPage(pgOrders, offset, mixed, { where: paid } as never)).toThrow(ConfigError);
    expect(() => keysetPage(pgOrders, offset, mixed, { db: pgDb, wher: paid } as never)).toThrow(/wher/);
    // The first offset page and cursor pages: the filters ANDed, nothing deferred.
    const first = keysetPage(pgOrders, { ...offset, offset: 0 }, mixed, { db: pgDb, where: paid });
    expect(first).toMatchObject({ limit: 11, offset: 0 });
    expect(pgDb.select({ id: pgOrders.id }).from(pgOrders).where(first.where).toSQL().sql).toBe('select "id" from "orders" where "orders"."status" = $1');
  });

  it('first page and offset mode: no condition (undefined, which and() drops), the offset', () => {
    expect(keysetPage(liteOrders, cursor(null), mixed)).toMatchObject({ where: undefined, limit: 21, offset: 0 });
    const offset: PagePlan = { mode: 'offset', limit: 10, take: 11, offset: 30, sort: mixed, fingerprint: 'fp' };
    expect(keysetPage(liteOrders, offset, mixed)).toMatchObject({ where: undefined, limit: 11, offset: 30 });
  });

  it('refuses a sort column the table lacks, a table of no known core, and plans that do not fit', () => {
    const typo = defineSortSpec([
      { key: 'createdAt', column: 'orders.created_on', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    expect(() => keysetPage(pgOrders, cursor(null), typo)).toThrow(ConfigError);
    expect(() => keysetPage(pgOrders, cursor(null), typo)).toThrow(/no column "created_on"/);
    // A column of another table in a join is the query's business.
    const joined = defineSortSpec([
      { key: 'name', column: 'customers.name', dir: 'asc', type: 'string' },
      { key: 'id', column: 'orders.id', dir: 'asc', type: 'bigint', unique: true },
    ]);
    expect(keysetPage(pgOrders, cursor(null), joined).orderBy).toHaveLength(2);
    expect(() => keysetPage({} as never, cursor(null), mixed)).toThrow(ConfigError);
    expect(() => keysetPage(pgOrders, cursor(['yesterday', '1']), mixed)).toThrow(TypeError);
  });

  it('an alias() picks its core and checks columns under its own name', () => {
    const o = pg.alias(pgOrders, 'o');
    const spec = defineSortSpec([
      { key: 'createdAt', column: 'o.created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', column: 'o.id', dir: 'desc', type: 'bigint', unique: true },
    ]);
    expect(keysetPage(o, cursor([T, '1']), spec).where).toBeDefined();
    expect(() => keysetPage(o, cursor(null), defineSortSpec([{ key: 'id', column: 'o.ident', dir: 'asc', type: 'bigint', unique: true }]))).toThrow(
      ConfigError,
    );
  });
});

describe('countRows (Drizzle)', () => {
  it('counts the rows matching the filters; refuses an alias, which $count would name as a table', async () => {
    const sqlite = new Database(':memory:');
    sqlite.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, status TEXT NOT NULL);
      INSERT INTO orders VALUES (1, 'a', 'paid'), (2, 'b', 'open'), (3, 'c', 'paid');`);
    const db = sqliteDrizzle({ client: sqlite });
    try {
      expect(await countRows(db, liteOrders, eq(liteOrders.status, 'paid'))).toBe(2);
      expect(await countRows(db, liteOrders)).toBe(3);
      // A capped count stops at the limit, with or without filters.
      expect(await countRows(db, liteOrders, undefined, { limit: 2 })).toBe(2);
      expect(await countRows(db, liteOrders, eq(liteOrders.status, 'paid'), { limit: 5 })).toBe(2);
      expect(await countRows(db, liteOrders, eq(liteOrders.status, 'paid'), { limit: 1 })).toBe(1);
      await expect(countRows(db, liteOrders, undefined, { limit: 0 })).rejects.toThrow(RangeError);
      await expect(countRows(db, lite.alias(liteOrders, 'o'))).rejects.toThrow(ConfigError);
    } finally {
      sqlite.close();
    }
  });
});
