/**
 * Page fetch time by depth: OFFSET vs keyset (`keysetWhere`) over 1M orders, on
 * embedded PGlite and on PostgreSQL, plus the cost of offset mode's `total` in each total
 * mode (exact `count(*)`, exact capped at 10,000, the planner's estimate, none), over the
 * whole table and under a `status` filter, with the SQL the example runs. On PostgreSQL the same keyset page also goes through `@keyset/kysely`
 * (query building + Kysely's driver included), to show the builder adds nothing
 * measurable next to the query. Writes bench/results/db-depth.json and docs/img/db-depth.svg.
 *
 * Env: BENCH_ROWS (1_000_000), BENCH_REPEAT (5), TEST_DATABASE_URL (PostgreSQL;
 * skipped with a message when nothing answers).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { keysetWhere, type PagePlan, type SortSpec } from '@keyset/core';
import { keysetPage } from '@keyset/kysely';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { save, setting, SMOKE, TMP } from './support.ts';

const ROWS = setting('BENCH_ROWS', 1_000_000, 2_000);
const REPEAT = setting('BENCH_REPEAT', 5, 1);
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
  CREATE INDEX orders_status_page ON orders (status, created_at DESC, id DESC);
  ANALYZE orders;`;

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

type Row = { depth: number; offsetMs: number; keysetMs: number; kyselyMs?: number };

async function measure(name: string, db: Db, kysely?: Kysely<BenchDB>): Promise<Row[]> {
  console.log(`${name}: seeding ${ROWS.toLocaleString('en-US')} orders…`);
  const t = performance.now();
  await db.exec(SETUP);
  console.log(`${name}: seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const out: Row[] = [];
  for (const depth of DEPTHS) {
    const offsetMs = await time(db, `SELECT ${COLUMNS} FROM orders ORDER BY created_at DESC, id DESC LIMIT ${LIMIT + 1} OFFSET ${depth}`);
    let plan: PagePlan = { mode: 'cursor', limit: LIMIT, take: LIMIT + 1, direction: 'forward', after: null, sort, fingerprint: '' };
    if (depth > 0) {
      const { rows } = await db.query(`SELECT ${COLUMNS} FROM orders ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${depth - 1}`);
      const last = rows[0]!;
      plan = { mode: 'cursor', limit: LIMIT, take: LIMIT + 1, direction: 'forward', after: [String(last.created_at_text), String(last.id)], sort, fingerprint: '' };
    }
    const q = keysetWhere(plan, sort, 'postgres');
    const keysetMs = await time(db, `SELECT ${COLUMNS} FROM orders WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT ${q.limit}`, q.params);
    const row: Row = { depth, offsetMs, keysetMs };
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
    const viaKysely = row.kyselyMs === undefined ? '' : `   via Kysely ${row.kyselyMs.toFixed(2).padStart(6)} ms`;
    console.log(`${name} depth ${String(depth).padStart(7)}: offset ${offsetMs.toFixed(2).padStart(8)} ms   keyset ${keysetMs.toFixed(2).padStart(6)} ms${viaKysely}`);
  }
  return out;
}

const results: Record<string, { depths: Row[]; countMs: number; totals: TotalRow[] }> = {};

const lite = await PGlite.create();
const liteDb: Db = { query: (t, p) => lite.query(t, p), exec: (t) => lite.exec(t), close: () => lite.close() };
results.PGlite = { depths: await measure('PGlite', liteDb), countMs: await time(liteDb, 'SELECT count(*) FROM orders'), totals: await measureTotals('PGlite', liteDb) };
await liteDb.close();

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  await pool.query('SELECT 1');
  const schema = `keyset_bench_${process.pid}`;
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`SET search_path TO ${schema}`);
  const pgDb: Db = { query: (t, p) => pool.query(t, p), exec: (t) => pool.query(t), close: async () => {} };
  try {
    // No destroy(): it would end the pool, which the finally below owns.
    const kysely = new Kysely<BenchDB>({ dialect: new PostgresDialect({ pool }) });
    results.PostgreSQL = {
      depths: await measure('PostgreSQL', pgDb, kysely),
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

for (const [name, r] of Object.entries(results)) console.log(`${name}: SELECT count(*) over ${ROWS} rows: ${r.countMs.toFixed(1)} ms`);
save('db-depth', { rows: ROWS, limit: LIMIT, repeat: REPEAT, results });
// Smoke mode draws the chart too, but not over the one the docs show.
writeFileSync(SMOKE ? join(TMP, 'db-depth.svg') : join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'img', 'db-depth.svg'), chart(results));

/** A small log-scale line chart, written by hand so the bench needs no plotting library. */
function chart(data: typeof results): string {
  const W = 720;
  const H = 400;
  const pad = { l: 70, r: 190, t: 30, b: 50 };
  const series = Object.entries(data).flatMap(([engine, r]) => [
    { name: `${engine} OFFSET`, dash: '', points: r.depths.map((d) => [d.depth, d.offsetMs] as const) },
    { name: `${engine} keyset`, dash: '6 4', points: r.depths.map((d) => [d.depth, d.keysetMs] as const) },
    ...(r.depths.every((d) => d.kyselyMs !== undefined)
      ? [{ name: `${engine} keyset (Kysely)`, dash: '2 3', points: r.depths.map((d) => [d.depth, d.kyselyMs!] as const) }]
      : []),
  ]);
  const colors = ['#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b'];
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
    const color = colors[i % colors.length];
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`);
    const ly = pad.t + 20 + i * 20;
    parts.push(`<line x1="${W - pad.r + 15}" x2="${W - pad.r + 45}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2" stroke-dasharray="${s.dash}"/>`);
    parts.push(`<text x="${W - pad.r + 52}" y="${ly + 4}">${s.name}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
