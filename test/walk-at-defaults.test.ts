/**
 * A walk with each driver left at its defaults (pg.Pool and PGlite without type parsers,
 * mysql2 without `dateStrings` or `bigNumberStrings`, better-sqlite3 without safe
 * integers), as a new user's project has it, over 100 rows whose timestamps share
 * milliseconds (groups of 4 equal ones, the groups 13 µs apart) and whose ids mix 1 to 3
 * digits with ids past 2^53: through @keyset/kysely and @keyset/drizzle (`page.select`)
 * every row once, forward and back; through SQL that hands the paginator what the
 * driver made of the columns (a `Date`, a rounded number), a `ConfigError` on the first
 * page that names the setting to change. Never fewer rows.
 */
import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { ConfigError, createPaginator, keysetWhere, type PagePlan, type SortKey, type SqlDialect } from '@keyset/core';
import { keysetPage as drizzlePage } from '@keyset/drizzle';
import { keysetPage as kyselyPage } from '@keyset/kysely';
import { createPglite, mysqlUrl, postgresUrl, uniqueSchema } from '@keyset/test-support';
import Database from 'better-sqlite3';
import { sql as dsql } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import * as my from 'drizzle-orm/mysql-core';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import * as pgc from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import * as lite from 'drizzle-orm/sqlite-core';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql, type Dialect } from 'kysely';
import mysql from 'mysql2';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../packages/core/src/pagination/mysql.test-support.ts';
import { pgliteDialect } from '../packages/kysely/src/kysely-walks.test-support.ts';

const ROWS = 100;
const idOf = (i: number): bigint => (i % 4 === 0 ? 9007199254740993n + BigInt(i) : BigInt(i + 1));
/** `2025-01-01 00:32:00` plus 13 µs per group of 4, as `YYYY-MM-DD HH:MM:SS.ffffff`. */
const createdAt = (i: number): string => `2025-01-01 00:32:00.${String(Math.floor(i / 4) * 13).padStart(6, '0')}`;
/** Newest group first, the largest id first within a group. */
const expected = Array.from({ length: ROWS / 4 }, (_, g) => ROWS / 4 - 1 - g).flatMap((g) =>
  [0, 1, 2, 3].map((j) => idOf(4 * g + j)).sort((a, b) => (a < b ? 1 : -1)).map(String),
);
const secret = randomBytes(32).toString('base64');
const newestFirst = (createdAtColumn: string, idColumn: string): SortKey[] => [
  { key: 'createdAt', column: createdAtColumn, dir: 'desc', type: 'timestamp' },
  { key: 'id', column: idColumn, dir: 'desc', type: 'bigint', unique: true },
];

type Row = Record<string, unknown>;

/** Pages of 7 from the first to the last, then back to the first; `idText` counted. */
async function walk(sort: SortKey[], fetch: (plan: PagePlan) => Promise<Row[]>): Promise<{ forward: string[]; backward: string[] }> {
  const paginator = createPaginator<Row>({ endpoint: 'GET /orders', sort, cursor: { secrets: [secret] } });
  const page = async (cursor: string | null) => {
    const query = new URLSearchParams(cursor === null ? { limit: '7' } : { limit: '7', cursor });
    const plan = await paginator.plan(query);
    const { body } = await paginator.page(plan, await fetch(plan), { url: `https://api.example.com/orders?${query}` });
    return body as { items: Row[]; nextCursor: string | null; prevCursor: string | null };
  };
  const ids = (items: Row[]) => items.map((r) => String(r.idText));
  let body = await page(null);
  const forward = ids(body.items);
  for (let n = 0; body.nextCursor !== null && n < ROWS; n++) {
    body = await page(body.nextCursor);
    forward.push(...ids(body.items));
  }
  const backward = ids(body.items).reverse();
  for (let n = 0; body.prevCursor !== null && n < ROWS; n++) {
    body = await page(body.prevCursor);
    backward.push(...ids(body.items).reverse());
  }
  return { forward, backward };
}

function expectExact(result: { forward: string[]; backward: string[] }): void {
  expect(`${new Set(result.forward).size} of ${ROWS} rows forward`).toBe(`${ROWS} of ${ROWS} rows forward`);
  expect(result.forward).toEqual(expected);
  expect(result.backward).toEqual([...expected].reverse());
}

/** The first page refuses, naming what to change; no row is served short. */
async function expectRefused(result: Promise<unknown>, setting: RegExp): Promise<void> {
  const error = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(setting);
}

/** One engine at its driver's defaults. */
interface Engine {
  dialect: SqlDialect;
  kysely: Kysely<any>;
  drizzle: any;
  /** The table in Drizzle's default column modes (Date timestamps, number ids). */
  orders: any;
  /** The exact id as text, for counting: the drivers' own `id` may be rounded. */
  idText: string;
  /** Raw SQL, rows as the driver makes them. */
  query(text: string, params: unknown[]): Promise<Row[]>;
}

function engineTests(name: string, engine: () => Engine, skip: boolean) {
  describe.skipIf(skip)(`${name} at the driver's defaults`, () => {
    it('@keyset/kysely: every row once, newest first, forward and back', async () => {
      const e = engine();
      const result = await walk(newestFirst('o.created_at', 'o.id'), (plan) =>
        kyselyPage(e.kysely.selectFrom('orders as o').select(['o.id', 'o.created_at as createdAt', sql<string>`${sql.raw(e.idText.replaceAll('$', 'o.id'))}`.as('idText')]), plan, plan.sort, e.dialect).execute(),
      );
      expectExact(result);
    });

    it('@keyset/drizzle with page.select: every row once, newest first, forward and back', async () => {
      const e = engine();
      const result = await walk(newestFirst('orders.created_at', 'orders.id'), async (plan) => {
        const page = drizzlePage(e.orders, plan, plan.sort);
        const idText = dsql<string>`${dsql.raw(e.idText.replaceAll('$', '"orders"."id"').replaceAll('"', e.dialect === 'mysql' ? '`' : '"'))}`.as('id_text');
        return e.drizzle.select({ ...page.select, id: e.orders.id, createdAt: e.orders.createdAt, idText }).from(e.orders).where(page.where).orderBy(...page.orderBy).limit(page.limit);
      });
      expectExact(result);
    });

    it('@keyset/drizzle without page.select, columns in their default modes: refused on the first page', async () => {
      const e = engine();
      await expectRefused(
        walk(newestFirst('orders.created_at', 'orders.id'), async (plan) => {
          const page = drizzlePage(e.orders, plan, plan.sort);
          return e.drizzle.select({ id: e.orders.id, createdAt: e.orders.createdAt }).from(e.orders).where(page.where).orderBy(...page.orderBy).limit(page.limit);
        }),
        e.dialect === 'sqlite' ? /"id" \(type bigint\) got the JS number .* past 2\^53.*page\.select/ : /"createdAt" \(type timestamp\) got a JS Date.*page\.select.*mode: 'string'/,
      );
    });

    it('raw SQL handing over the driver\'s values: refused on the first page, naming the setting', async () => {
      const e = engine();
      await expectRefused(
        walk(newestFirst('created_at', 'id'), async (plan) => {
          const k = keysetWhere(plan, plan.sort, e.dialect);
          return e.query(`SELECT id, created_at AS "createdAt" FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`.replaceAll('"', e.dialect === 'mysql' ? '`' : '"'), k.params);
        }),
        e.dialect === 'sqlite'
          ? /"id" \(type bigint\) got the JS number .*safeIntegers/
          : e.dialect === 'mysql'
            ? /"createdAt" \(type timestamp\) got a JS Date.*dateStrings: true/
            : /"createdAt" \(type timestamp\) got a JS Date.*isoTimestamp/,
      );
    });

    it('raw SQL, a bigint key alone: a JS number past 2^53 refused (mysql2, better-sqlite3); text served exactly (pg, PGlite)', async () => {
      const e = engine();
      const idOnly: SortKey[] = [{ key: 'id', dir: 'desc', type: 'bigint', unique: true }];
      const byId = walk(idOnly, async (plan) => {
        const k = keysetWhere(plan, plan.sort, e.dialect);
        const rows = await e.query(`SELECT id, ${e.idText.replaceAll('$', 'id')} AS idText FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`, k.params);
        return rows.map((r) => ({ ...r, idText: r.idText ?? r.idtext }));
      });
      if (e.dialect === 'postgres') {
        const { forward } = await byId;
        expect(forward).toEqual([...expected].sort((a, b) => (BigInt(a) < BigInt(b) ? 1 : -1)));
      } else {
        await expectRefused(byId, /past 2\^53.*(bigNumberStrings: true|safeIntegers)/);
      }
    });

    it('raw SQL, a decimal key: a JS number refused (a SQLite REAL), decimal text served (numeric, DECIMAL)', async () => {
      const e = engine();
      const byAmount: SortKey[] = [
        { key: 'amount', dir: 'asc', type: 'decimal' },
        { key: 'id', dir: 'asc', type: 'bigint', unique: true },
      ];
      const result = walk(byAmount, async (plan) => {
        const k = keysetWhere(plan, plan.sort, e.dialect);
        const rows = await e.query(`SELECT ${e.idText.replaceAll('$', 'id')} AS id, amount, ${e.idText.replaceAll('$', 'id')} AS idText FROM orders WHERE ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limit}`, k.params);
        return rows.map((r) => ({ ...r, idText: r.idText ?? r.idtext }));
      });
      if (e.dialect === 'sqlite') await expectRefused(result, /"amount" \(type decimal\) got the JS number .*16 significant digits.*type: 'number'/);
      else expect(new Set((await result).forward).size).toBe(ROWS);
    });
  });
}

// PostgreSQL: pg.Pool with nothing but the connection (and a schema of the test's own).
const pgUrl = await postgresUrl();
const schema = uniqueSchema('keyset_defaults_walk');
let pgPool: pg.Pool;
let pgEngine: Engine;
// PGlite without `parsers`.
let pglite: PGlite;
let pgliteEngine: Engine;
// MariaDB: a mysql2 pool with the URI only.
const myUrl = await mysqlUrl();
let myDatabase: Awaited<ReturnType<typeof createTestDatabase>>;
let myPool: mysql.Pool;
let myEngine: Engine;
// SQLite: better-sqlite3 as opened.
let sqliteDb: Database.Database;
let sqliteEngine: Engine;

const pgOrders = pgc.pgTable('orders', { id: pgc.bigint('id', { mode: 'number' }).primaryKey(), createdAt: pgc.timestamp('created_at', { withTimezone: true }).notNull(), amount: pgc.numeric('amount').notNull() });
const myOrders = my.mysqlTable('orders', { id: my.bigint('id', { mode: 'number' }).primaryKey(), createdAt: my.datetime('created_at', { fsp: 6 }).notNull(), amount: my.decimal('amount', { precision: 20, scale: 2 }).notNull() });
const liteOrders = lite.sqliteTable('orders', { id: lite.integer('id').primaryKey(), createdAt: lite.text('created_at').notNull(), amount: lite.real('amount').notNull() });

/** Amounts of 17 integer digits and cents: no two the same double. */
const amount = (i: number): string => `12345678901234567.${String(i).padStart(2, '0')}`;
const values = Array.from({ length: ROWS }, (_, i) => ({ id: idOf(i), createdAt: createdAt(i), amount: amount(i) }));
const PG_DDL = 'CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, amount numeric NOT NULL)';
const pgInsert = `INSERT INTO orders VALUES ${values.map((v) => `(${v.id}, '${v.createdAt}+00', ${v.amount})`).join(', ')}`;

function kyselyOf(dialect: Dialect): Kysely<any> {
  return new Kysely<any>({ dialect });
}

beforeAll(async () => {
  if (pgUrl !== undefined) {
    pgPool = new pg.Pool({ connectionString: pgUrl, max: 2, options: `-c search_path=${schema}` });
    await pgPool.query(`CREATE SCHEMA ${schema}`);
    await pgPool.query(PG_DDL);
    await pgPool.query(pgInsert);
    pgEngine = {
      dialect: 'postgres',
      kysely: kyselyOf(new PostgresDialect({ pool: pgPool })),
      drizzle: drizzlePg({ client: pgPool }),
      orders: pgOrders,
      idText: '$::text',
      query: async (text, params) => (await pgPool.query(text, params)).rows,
    };
  }
  pglite = await createPglite();
  await pglite.exec(`${PG_DDL}; ${pgInsert}`);
  pgliteEngine = {
    dialect: 'postgres',
    kysely: kyselyOf(pgliteDialect(pglite)),
    drizzle: drizzlePglite(pglite),
    orders: pgOrders,
    idText: '$::text',
    query: async (text, params) => (await pglite.query<Row>(text, params)).rows,
  };
  if (myUrl !== undefined) {
    myDatabase = await createTestDatabase(myUrl, 'keyset_defaults_walk');
    myPool = mysql.createPool({ uri: myDatabase.url, connectionLimit: 2 });
    const p = myPool.promise();
    await p.query('CREATE TABLE orders (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, amount DECIMAL(20, 2) NOT NULL)');
    await p.query(`INSERT INTO orders VALUES ${values.map(() => '(CAST(? AS SIGNED), ?, ?)').join(', ')}`, values.flatMap((v) => [String(v.id), v.createdAt, v.amount]));
    myEngine = {
      dialect: 'mysql',
      kysely: kyselyOf(new MysqlDialect({ pool: myPool })),
      drizzle: drizzleMysql({ client: p }),
      orders: myOrders,
      idText: 'CAST($ AS CHAR)',
      query: async (text, params) => (await p.query(text, params))[0] as Row[],
    };
  }
  sqliteDb = new Database(':memory:');
  sqliteDb.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, amount REAL NOT NULL)');
  const insert = sqliteDb.prepare('INSERT INTO orders VALUES (?, ?, ?)');
  // ISO text, fixed width: SQLite compares timestamps as text.
  for (const v of values) insert.run(v.id, `${v.createdAt.replace(' ', 'T')}Z`, Number(v.amount));
  sqliteEngine = {
    dialect: 'sqlite',
    kysely: kyselyOf(new SqliteDialect({ database: sqliteDb })),
    drizzle: drizzleSqlite({ client: sqliteDb }),
    orders: liteOrders,
    idText: 'CAST($ AS TEXT)',
    query: async (text, params) => sqliteDb.prepare(text).all(...params.map((p) => (typeof p === 'boolean' ? Number(p) : p))) as Row[],
  };
}, 60_000);

afterAll(async () => {
  if (pgUrl !== undefined) {
    await pgPool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pgPool.end();
  }
  await pglite?.close();
  if (myUrl !== undefined) {
    await new Promise((resolve) => myPool.end(resolve));
    await myDatabase.drop();
  }
  sqliteDb?.close();
});

engineTests('PostgreSQL (pg.Pool)', () => pgEngine, pgUrl === undefined);
engineTests('PGlite', () => pgliteEngine, false);
engineTests('MariaDB (mysql2)', () => myEngine, myUrl === undefined);
engineTests('SQLite (better-sqlite3)', () => sqliteEngine, false);
