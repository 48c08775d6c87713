/**
 * The keysetPage snippets of packages/kysely/README.md and packages/drizzle/README.md, as
 * written, walk a real PostgreSQL table through a `pg.Pool` left at its defaults (no type
 * parser: a timestamptz arrives as a JS Date, a bigint as text), over rows whose
 * timestamps differ in their microseconds inside one millisecond and whose ids pass 2^53:
 * every row once forward, and once again walking back through `prevCursor`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleAsFunction, samples } from './support/docs-samples.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, '.docs-run', `walk-${process.pid}`);
const url = await postgresUrl();
const schema = uniqueSchema('keyset_readme_walk');
const ROWS = 100;
let pool: pg.Pool;

/** The README's one snippet that calls keysetPage, as a function of its context. */
async function snippet(file: string): Promise<(...args: unknown[]) => Promise<{ body: { items: { id: unknown }[]; nextCursor: string | null; prevCursor: string | null } }>> {
  const found = samples().filter((s) => s.file === file && s.code.includes('keysetPage('));
  expect(found, `${file}: one keysetPage snippet`).toHaveLength(1);
  const { module } = sampleAsFunction(found[0]!, ['body', 'headers'], ['db', 'url']);
  const path = join(dir, `${file.replace(/[^a-z0-9]+/gi, '_')}.mts`);
  writeFileSync(path, module);
  return ((await import(pathToFileURL(path).href)) as { run: never }).run;
}

interface Walk {
  forward: string[];
  backward: string[];
}

/** Pages of 7 from the first page to the last, then back through prevCursor to the first. */
async function walk(page: (url: URL) => Promise<{ body: { items: { id: unknown }[]; nextCursor: string | null; prevCursor: string | null } }>): Promise<Walk> {
  const at = (cursor: string | null) => new URL(`https://api.example.com/orders?limit=7${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
  const forward: string[] = [];
  let body = (await page(at(null))).body;
  forward.push(...body.items.map((r) => String(r.id)));
  for (let n = 0; body.nextCursor !== null && n < ROWS; n++) {
    body = (await page(at(body.nextCursor))).body;
    forward.push(...body.items.map((r) => String(r.id)));
  }
  const backward: string[] = [...body.items.map((r) => String(r.id))].reverse();
  for (let n = 0; body.prevCursor !== null && n < ROWS; n++) {
    body = (await page(at(body.prevCursor))).body;
    backward.push(...[...body.items.map((r) => String(r.id))].reverse());
  }
  return { forward, backward };
}

beforeAll(async () => {
  if (url === undefined) return;
  mkdirSync(dir, { recursive: true });
  process.env.CURSOR_SECRET = randomBytes(32).toString('base64');
  // Defaults, but for the schema a test of its own needs.
  pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query('CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, status text NOT NULL, amount_cents int NOT NULL)');
  // 100 paid orders in groups of 4 sharing a timestamp, the groups 13 µs apart (about 19
  // of them in a millisecond), ids of 1 to 3 digits (text order is not number order: the
  // id breaks the ties) and past 2^53, and refunded ones among them that the filter must
  // keep out.
  await pool.query(`INSERT INTO orders
    SELECT CASE WHEN i % 4 = 0 THEN 9007199254740993 + i ELSE i + 1 END, timestamptz '2025-01-01 00:32:00+00' + (i / 4) * interval '13 microseconds', 'paid', i FROM generate_series(0, ${ROWS - 1}) i
    UNION ALL SELECT 9007199254750000 + i, timestamptz '2025-01-01 00:32:00+00' + i * interval '13 microseconds', 'refunded', i FROM generate_series(0, 9) i`);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
  rmSync(dir, { recursive: true, force: true });
});

/** Newest group first, the largest id first within a group. */
const idOf = (i: number): bigint => (i % 4 === 0 ? 9007199254740993n + BigInt(i) : BigInt(i + 1));
const expected = Array.from({ length: ROWS / 4 }, (_, g) => ROWS / 4 - 1 - g).flatMap((g) =>
  [0, 1, 2, 3].map((j) => idOf(4 * g + j)).sort((a, b) => (a < b ? 1 : -1)).map(String),
);

describe.skipIf(url === undefined)('README snippets walk a default pg.Pool exactly', () => {
  it('@keyset/kysely: every row once, newest first, forward and back', async () => {
    const run = await snippet('packages/kysely/README.md');
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    const { forward, backward } = await walk((u) => run(db, u));
    expect(`${new Set(forward).size} of ${ROWS} rows forward`).toBe(`${ROWS} of ${ROWS} rows forward`);
    expect(forward).toEqual(expected);
    expect(backward).toEqual([...expected].reverse());
  });

  it('@keyset/drizzle: every row once, newest first, forward and back', async () => {
    const run = await snippet('packages/drizzle/README.md');
    const db = drizzle(pool);
    const { forward, backward } = await walk((u) => run(db, u));
    expect(`${new Set(forward).size} of ${ROWS} rows forward`).toBe(`${ROWS} of ${ROWS} rows forward`);
    expect(forward).toEqual(expected);
    expect(backward).toEqual([...expected].reverse());
  });
});
