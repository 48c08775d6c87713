/**
 * Page fetch time by depth over 1M orders: the plain OFFSET query (what offset pages ran
 * before), the deferred join offset pages run now (a subquery of ids with ORDER BY, LIMIT
 * and OFFSET joined back to the rows), and keyset (`keysetWhere`), on embedded PGlite, on
 * PostgreSQL, on SQLite (better-sqlite3) and on MySQL/MariaDB (mysql2). On PGlite and
 * PostgreSQL the deferred join is the example's own `orderPageQuery`; on MySQL/MariaDB it
 * is `@keyset/kysely`'s `keysetPage`, and `@keyset/drizzle`'s beside it (its `IN` form); on
 * SQLite `@keyset/kysely` keeps the plain OFFSET, and the column shows what it runs. Plus the cost of offset mode's
 * `total` in each total mode (exact `count(*)`, exact capped at 10,000, the planner's
 * estimate, none), over the whole table and under a `status` filter, with the SQL the
 * example runs, on PGlite and PostgreSQL. On PostgreSQL the same keyset page also goes
 * through `@keyset/kysely` (query building + Kysely's driver included), to show the
 * builder adds nothing measurable next to the query. Writes bench/results/db-depth.json
 * and docs/img/db-depth.svg.
 *
 * The tables are vacuumed after seeding, as autovacuum does to a live table: the deferred
 * join's subquery is an index-only scan on PostgreSQL, which skips the heap only for pages
 * the visibility map marks all-visible.
 *
 * Env: BENCH_ROWS (1_000_000), BENCH_REPEAT (5), BENCH_ENGINES (a comma-separated subset
 * of `pglite,postgres,sqlite,mysql`; all by default), TEST_DATABASE_URL (PostgreSQL),
 * TEST_MYSQL_URL (MySQL/MariaDB); a server that does not answer is skipped with a message.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { keysetWhere, type PagePlan, type SortSpec, type SqlDialect } from '@keyset/core';
import { keysetPage as drizzleKeysetPage } from '@keyset/drizzle';
import { keysetPage } from '@keyset/kysely';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/mysql2';
import { bigint, char, datetime, int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { orderPageQuery } from '../examples/orders-api/src/app/orders.ts';
import { save, setting, SMOKE, TMP } from './support.ts';

const ROWS = setting('BENCH_ROWS', 1_000_000, 2_000);
const REPEAT = setting('BENCH_REPEAT', 5, 1);
const ENGINES = new Set((process.env.BENCH_ENGINES ?? 'pglite,postgres,sqlite,mysql').split(',').map((e) => e.trim()));
const LIMIT = 20;
const DEPTHS = [0, 1_000, 10_000, 100_000, 250_000, 500_000, 750_000, 990_000].filter((d) => d < ROWS - LIMIT);

interface Db {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(text: string): Promise<unknown>;
  close(): Promise<void>;
}

const sort: SortSpec = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', column: 'id', dir: 'desc', type: 'bigint', unique: true },
];

const SETUP = `
  CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, customer text NOT NULL,
    amount_cents integer NOT NULL, currency char(3) NOT NULL, status text NOT NULL);
  INSERT INTO orders
    SELECT g, timestamptz '2026-01-01 00:00:00+00' - (g / 3) * interval '1 second' - (g % 7) * interval '1 microsecond',
           'customer-' || (g % 97), 500 + (g * 31) % 20000, 'EUR', CASE WHEN g % 5 = 0 THEN 'refunded' ELSE 'paid' END
    FROM generate_series(1, ${ROWS}) AS g;
  CREATE INDEX orders_page ON orders (created_at DESC, id DESC);
  CREATE INDEX orders_status_page ON orders (status, created_at DESC, id DESC);`;
/** Run alone: VACUUM refuses to run inside the transaction a multi-statement string opens. */
const VACUUM = 'VACUUM ANALYZE orders';

/** The same orders in SQLite: ISO text timestamps (fixed width, so text order is time order). */
const SQLITE_SETUP = `
  CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, customer TEXT NOT NULL,
    amount_cents INTEGER NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL);
  INSERT INTO orders
    WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${ROWS})
    SELECT n, strftime('%Y-%m-%dT%H:%M:%S', 1767225600 - n / 3 - (n % 7 > 0), 'unixepoch') || '.' ||
             printf('%06d', CASE WHEN n % 7 > 0 THEN 1000000 - n % 7 ELSE 0 END) || 'Z',
           'customer-' || (n % 97), 500 + (n * 31) % 20000, 'EUR', CASE WHEN n % 5 = 0 THEN 'refunded' ELSE 'paid' END
    FROM g;
  CREATE INDEX orders_page ON orders (created_at DESC, id DESC);
  ANALYZE;`;

/** The same orders in MySQL/MariaDB: DATETIME(6) in UTC, a million rows from six digit tables. */
const MYSQL_SETUP = [
  `CREATE TABLE orders (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, customer VARCHAR(32) NOT NULL,
    amount_cents INT NOT NULL, currency CHAR(3) NOT NULL, status VARCHAR(16) NOT NULL)`,
  `INSERT INTO orders
    WITH d AS (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
               UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9),
         g AS (SELECT 1 + a.n + 10 * b.n + 100 * c.n + 1000 * e.n + 10000 * f.n + 100000 * h.n AS n
               FROM d a, d b, d c, d e, d f, d h)
    SELECT n, TIMESTAMP '2026-01-01 00:00:00' - INTERVAL (n DIV 3) SECOND - INTERVAL (n % 7) MICROSECOND,
           CONCAT('customer-', n % 97), 500 + (n * 31) % 20000, 'EUR', CASE WHEN n % 5 = 0 THEN 'refunded' ELSE 'paid' END
    FROM g WHERE n <= ${ROWS}`,
  'CREATE INDEX orders_page ON orders (created_at DESC, id DESC)',
  'ANALYZE TABLE orders',
];

/** The cap of the capped exact mode (`total: { mode: 'exact', cap: TOTAL_CAP }`). */
const TOTAL_CAP = 10_000;

/** One total mode's cost: the statement offset mode runs for `total`, as the example writes it. */
type TotalRow = { mode: string; filter: string; ms: number; value: number; exact: number };

/** The total modes, each as the SQL the example's `countTotal` counters run (`none` runs nothing). */
async function measureTotals(name: string, db: Db): Promise<TotalRow[]> {
  const out: TotalRow[] = [];
  for (const [filter, where, params] of [
    ['none', 'TRUE', []],
    ["status = 'refunded' (20%)", 'status = $1', ['refunded']],
  ] as const) {
    const matching = `SELECT 1 FROM orders WHERE ${where}`;
    const exactSql = `SELECT count(*)::text AS n FROM (${matching}) AS m`;
    const exact = Number((await db.query(exactSql, [...params])).rows[0]!.n);
    const modes: [string, string | undefined, (rows: Record<string, unknown>[]) => number][] = [
      ['exact', exactSql, (rows) => Number(rows[0]!.n)],
      [`exact, cap ${TOTAL_CAP.toLocaleString('en-US')}`, `SELECT count(*)::text AS n FROM (${matching} LIMIT ${TOTAL_CAP + 1}) AS m`, (rows) => Math.min(Number(rows[0]!.n), TOTAL_CAP)],
      ['estimated', `EXPLAIN (FORMAT JSON) ${matching}`, (rows) => {
        const cell = Object.values(rows[0]!)[0];
        const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [{ Plan: { 'Plan Rows': number } }];
        return plan[0].Plan['Plan Rows'];
      }],
      ['none', undefined, () => NaN],
    ];
    for (const [mode, sql, read] of modes) {
      const ms = sql === undefined ? 0 : await time(db, sql, [...params]);
      const value = sql === undefined ? NaN : read((await db.query(sql, [...params])).rows);
      out.push({ mode, filter, ms, value, exact });
      console.log(`${name} total ${mode.padEnd(18)} filter ${filter.padEnd(26)} ${ms.toFixed(2).padStart(8)} ms   reports ${Number.isNaN(value) ? 'null' : value} (exact ${exact})`);
    }
  }
  return out;
}

// The text alias must not be named created_at: PostgreSQL resolves ORDER BY names to output
// columns first, so ORDER BY created_at would sort by the text and never use the index.
const COLUMNS = `id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text, customer, amount_cents, currency, status`;

interface BenchDB {
  orders: { id: string; created_at: string; customer: string; amount_cents: number; currency: string; status: string };
}

function time(db: Db, text: string, params: unknown[] = []): Promise<number> {
  return timeCall(() => db.query(text, params));
}

async function timeCall(call: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < REPEAT + 1; i++) {
    const t = performance.now();
    await call();
    if (i > 0) samples.push(performance.now() - t); // first run warms the cache
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1]!;
}

/**
 * One depth's figures: the plain OFFSET query, the deferred join offset pages run now
 * (`deferredMs`), the keyset page, and on PostgreSQL the keyset page through Kysely.
 */
type Row = { depth: number; offsetMs: number; deferredMs: number; keysetMs: number; kyselyMs?: number; drizzleMs?: number };

/** How one engine spells the three page queries. */
interface Engine {
  dialect: SqlDialect;
  /** The select list; the timestamp comes back as ISO text in `created_at_text`. */
  columns: string;
  /** The deferred join offset page at `depth`, as offset pages run it now. */
  deferred(plan: PagePlan): Promise<unknown>;
  /** The cursor form of a row's `created_at_text`. */
  cursorTimestamp(text: string): string;
  /** The deferred join as `@keyset/drizzle` writes it (`unique IN (keys)`), where measured. */
  drizzle?(plan: PagePlan): Promise<unknown>;
}

const offsetPlan = (depth: number): PagePlan => ({ mode: 'offset', limit: LIMIT, take: LIMIT + 1, offset: depth, sort, fingerprint: '' });

const PG_ENGINE = (db: Db): Engine => ({
  dialect: 'postgres',
  columns: COLUMNS,
  deferred: (plan) => {
    const q = orderPageQuery(plan);
    return db.query(q.sql, q.params);
  },
  cursorTimestamp: (text) => text,
});

async function measure(name: string, db: Db, engine: Engine, kysely?: Kysely<BenchDB>): Promise<Row[]> {
  const out: Row[] = [];
  const order = keysetWhere(offsetPlan(0), sort, engine.dialect).orderBy;
  for (const depth of DEPTHS) {
    const offsetMs = await time(db, `SELECT ${engine.columns} FROM orders ORDER BY ${order} LIMIT ${LIMIT + 1} OFFSET ${depth}`);
    const deferredMs = await timeCall(() => engine.deferred(offsetPlan(depth)));
    let plan: PagePlan = { mode: 'cursor', limit: LIMIT, take: LIMIT + 1, direction: 'forward', after: null, sort, fingerprint: '' };
    if (depth > 0) {
      const { rows } = await db.query(`SELECT ${engine.columns} FROM orders ORDER BY ${order} LIMIT 1 OFFSET ${depth - 1}`);
      const last = rows[0]!;
      plan = { ...plan, after: [engine.cursorTimestamp(String(last.created_at_text)), String(last.id)] };
    }
    const q = keysetWhere(plan, sort, engine.dialect);
    const keysetMs = await time(db, `SELECT ${engine.columns} FROM orders WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT ${q.limit}`, q.params);
    const row: Row = { depth, offsetMs, deferredMs, keysetMs };
    if (engine.drizzle !== undefined) row.drizzleMs = await timeCall(() => engine.drizzle!(offsetPlan(depth)));
    if (kysely !== undefined) {
      // Built anew each time, as a request handler would: building and compiling count.
      row.kyselyMs = await timeCall(() =>
        keysetPage(
          kysely
            .selectFrom('orders')
            .select([
              'id',
              sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('created_at_text'),
              'customer',
              'amount_cents',
              'currency',
              'status',
            ]),
          plan,
          sort,
          'postgres',
        ).execute(),
      );
    }
    out.push(row);
    const viaKysely =
      (row.kyselyMs === undefined ? '' : `   via Kysely ${row.kyselyMs.toFixed(2).padStart(6)} ms`) +
      (row.drizzleMs === undefined ? '' : `   deferred via Drizzle ${row.drizzleMs.toFixed(2).padStart(8)} ms`);
    console.log(
      `${name} depth ${String(depth).padStart(7)}: OFFSET ${offsetMs.toFixed(2).padStart(8)} ms   offset page now ${deferredMs.toFixed(2).padStart(8)} ms   keyset ${keysetMs.toFixed(2).padStart(6)} ms${viaKysely}`,
    );
  }
  return out;
}

async function seed(name: string, run: () => Promise<unknown>): Promise<void> {
  console.log(`${name}: seeding ${ROWS.toLocaleString('en-US')} orders…`);
  const t = performance.now();
  await run();
  console.log(`${name}: seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

const results: Record<string, { depths: Row[]; countMs: number; totals?: TotalRow[] }> = {};
const loadAverage = [loadavg()[0]!];

if (ENGINES.has('pglite')) {
  const lite = await PGlite.create();
  const liteDb: Db = { query: (t, p) => lite.query(t, p), exec: (t) => lite.exec(t), close: () => lite.close() };
  await seed('PGlite', async () => {
    await liteDb.exec(SETUP);
    await liteDb.exec(VACUUM);
  });
  results.PGlite = { depths: await measure('PGlite', liteDb, PG_ENGINE(liteDb)), countMs: await time(liteDb, 'SELECT count(*) FROM orders'), totals: await measureTotals('PGlite', liteDb) };
  await liteDb.close();
}

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  if (!ENGINES.has('postgres')) throw new Error('not in BENCH_ENGINES');
  await pool.query('SELECT 1');
  const schema = `keyset_bench_${process.pid}`;
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`SET search_path TO ${schema}`);
  const pgDb: Db = { query: (t, p) => pool.query(t, p), exec: (t) => pool.query(t), close: async () => {} };
  try {
    // No destroy(): it would end the pool, which the finally below owns.
    const kysely = new Kysely<BenchDB>({ dialect: new PostgresDialect({ pool }) });
    await seed('PostgreSQL', async () => {
      await pgDb.exec(SETUP);
      await pgDb.exec(VACUUM);
    });
    results.PostgreSQL = {
      depths: await measure('PostgreSQL', pgDb, PG_ENGINE(pgDb), kysely),
      countMs: await time(pgDb, 'SELECT count(*) FROM orders'),
      totals: await measureTotals('PostgreSQL', pgDb),
    };
  } finally {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  }
} catch (err) {
  console.warn(`PostgreSQL skipped: set TEST_DATABASE_URL to a reachable server (${(err as Error).message})`);
} finally {
  await pool.end();
}

// SQLite through better-sqlite3 (synchronous; wrapped so every engine is timed alike).
if (ENGINES.has('sqlite')) {
  const file = new Database(':memory:');
  const sqliteDb: Db = {
    query: async (t, p) => ({ rows: file.prepare(t).all(...(p ?? [])) as Record<string, unknown>[] }),
    exec: async (t) => file.exec(t),
    close: async () => {
      file.close();
    },
  };
  const kysely = new Kysely<BenchDB>({ dialect: new SqliteDialect({ database: file }) });
  await seed('SQLite', () => sqliteDb.exec(SQLITE_SETUP));
  results.SQLite = {
    depths: await measure('SQLite', sqliteDb, kyselyEngine(kysely, 'sqlite', 'created_at AS created_at_text', (text) => text)),
    countMs: await time(sqliteDb, 'SELECT count(*) FROM orders'),
  };
  await kysely.destroy();
}

// MySQL/MariaDB through mysql2, in a database of its own.
const mysqlUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
try {
  if (!ENGINES.has('mysql')) throw new Error('not in BENCH_ENGINES');
  const admin = await mysql.createConnection({ uri: mysqlUrl });
  const database = `keyset_bench_${process.pid}`;
  const { version } = ((await admin.query('SELECT VERSION() AS version'))[0] as { version: string }[])[0]!;
  const engineName = /mariadb/i.test(version) ? 'MariaDB' : 'MySQL';
  await admin.query(`CREATE DATABASE ${database}`);
  const own = new URL(mysqlUrl);
  own.pathname = `/${database}`;
  const options = { uri: own.href, dateStrings: true, supportBigNumbers: true, bigNumberStrings: true } as const;
  const conn = await mysql.createConnection(options);
  const kysely = new Kysely<BenchDB>({ dialect: new MysqlDialect({ pool: createPool({ ...options, connectionLimit: 1 }) }) });
  try {
    const mysqlDb: Db = { query: async (t, p) => ({ rows: (await conn.query(t, p ?? []))[0] as Record<string, unknown>[] }), exec: (t) => conn.query(t), close: () => conn.end() };
    await seed(engineName, async () => {
      for (const statement of MYSQL_SETUP) await mysqlDb.exec(statement);
    });
    // MySQL/MariaDB write DATETIME(6) as `2026-01-01 00:00:00.000001`; the cursor holds ISO 8601 in UTC.
    const orders = mysqlTable('orders', {
      id: bigint('id', { mode: 'bigint' }).primaryKey(),
      createdAt: datetime('created_at', { mode: 'string', fsp: 6 }).notNull(),
      customer: varchar('customer', { length: 32 }).notNull(),
      amountCents: int('amount_cents').notNull(),
      currency: char('currency', { length: 3 }).notNull(),
      status: varchar('status', { length: 16 }).notNull(),
    });
    const drizzleDb = drizzle({ client: conn });
    const engine: Engine = {
      ...kyselyEngine(kysely, 'mysql', 'created_at AS created_at_text', (text) => `${text.replace(' ', 'T')}Z`),
      drizzle: (plan) => {
        const page = drizzleKeysetPage(orders, plan, plan.sort, { db: drizzleDb });
        return drizzleDb.select().from(orders).where(page.where).orderBy(...page.orderBy).limit(page.limit).offset(page.offset);
      },
    };
    results[`${engineName} ${version.split('-')[0]}`] = { depths: await measure(engineName, mysqlDb, engine), countMs: await time(mysqlDb, 'SELECT count(*) FROM orders') };
  } finally {
    await kysely.destroy();
    await conn.end();
    await admin.query(`DROP DATABASE ${database}`);
    await admin.end();
  }
} catch (err) {
  console.warn(`MySQL/MariaDB skipped: set TEST_MYSQL_URL to a reachable server (${(err as Error).message})`);
}

/** SQLite and MySQL/MariaDB: the deferred join as `@keyset/kysely` writes it. */
function kyselyEngine(kysely: Kysely<BenchDB>, dialect: SqlDialect, timestamp: string, cursorTimestamp: (text: string) => string): Engine {
  return {
    dialect,
    columns: `id, ${timestamp}, customer, amount_cents, currency, status`,
    deferred: (plan) =>
      keysetPage(kysely.selectFrom('orders').select(['id', 'created_at', 'customer', 'amount_cents', 'currency', 'status']), plan, plan.sort, dialect).execute(),
    cursorTimestamp,
  };
}

for (const [name, r] of Object.entries(results)) console.log(`${name}: SELECT count(*) over ${ROWS} rows: ${r.countMs.toFixed(1)} ms`);
// The machine is shared: the load beside the run says how far to trust the absolute figures.
loadAverage.push(loadavg()[0]!);
save('db-depth', { rows: ROWS, limit: LIMIT, repeat: REPEAT, cores: cpus().length, loadAverage, results });
// Smoke mode draws the chart too, but not over the one the docs show.
writeFileSync(SMOKE ? join(TMP, 'db-depth.svg') : join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'img', 'db-depth.svg'), chart(results));

/** A small log-scale line chart, written by hand so the bench needs no plotting library. */
function chart(data: typeof results): string {
  const W = 760;
  const H = 420;
  const pad = { l: 70, r: 230, t: 30, b: 50 };
  // One colour per engine, one dash per query.
  const colors = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
  const series = Object.entries(data).flatMap(([engine, r], e) => [
    { name: `${engine} OFFSET`, dash: '', color: colors[e % colors.length]!, points: r.depths.map((d) => [d.depth, d.offsetMs] as const) },
    { name: `${engine} deferred join`, dash: '8 3', color: colors[e % colors.length]!, points: r.depths.map((d) => [d.depth, d.deferredMs] as const) },
    { name: `${engine} keyset`, dash: '2 3', color: colors[e % colors.length]!, points: r.depths.map((d) => [d.depth, d.keysetMs] as const) },
  ]);
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const yMin = Math.pow(10, Math.floor(Math.log10(Math.max(0.01, Math.min(...ys)))));
  const yMax = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys))));
  const xMax = ROWS;
  const x = (v: number): number => pad.l + (v / xMax) * (W - pad.l - pad.r);
  const y = (v: number): number =>
    pad.t + (1 - (Math.log10(Math.max(v, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - pad.t - pad.b);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${pad.l}" y="18" font-size="14">Time to fetch one page of ${LIMIT} by depth (${ROWS.toLocaleString('en-US')} rows, median of ${REPEAT})</text>`,
  ];
  for (let v = yMin; v <= yMax; v *= 10) {
    parts.push(`<line x1="${pad.l}" x2="${W - pad.r}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${pad.l - 8}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toFixed(2)} ms</text>`);
  }
  for (let i = 0; i <= 4; i++) {
    const v = (xMax * i) / 4;
    parts.push(`<text x="${x(v)}" y="${H - pad.b + 18}" text-anchor="middle">${Math.round(v / 1000)}k</text>`);
  }
  parts.push(`<text x="${(pad.l + W - pad.r) / 2}" y="${H - 12}" text-anchor="middle">depth (rows skipped)</text>`);
  parts.push(`<line x1="${pad.l}" x2="${pad.l}" y1="${pad.t}" y2="${H - pad.b}" stroke="#333"/>`);
  parts.push(`<line x1="${pad.l}" x2="${W - pad.r}" y1="${H - pad.b}" y2="${H - pad.b}" stroke="#333"/>`);
  series.forEach((s, i) => {
    const color = s.color;
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`);
    const ly = pad.t + 10 + i * 16;
    parts.push(`<line x1="${W - pad.r + 15}" x2="${W - pad.r + 45}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`);
    parts.push(`<text x="${W - pad.r + 52}" y="${ly + 4}">${s.name}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
