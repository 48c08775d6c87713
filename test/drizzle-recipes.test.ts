/**
 * The two Drizzle recipes the docs give, run as written against real databases, serve
 * their timestamps as RFC 3339 (`2025-01-01T00:32:00.000002Z`), as the API promises
 * everywhere, and their cursors still walk rows that share a millisecond:
 * - packages/drizzle/README.md, pg-core on node-postgres (PostgreSQL's own text would be
 *   `2025-01-01 00:32:00.000002+00`);
 * - docs/pagination.md "Recipe: Drizzle", mysql-core on mysql2 (MySQL's `DATETIME(6)` text
 *   would be `2025-01-01 00:32:00.000002`).
 * Each recipe runs in its own `node --import tsx` process from the repository (the
 * `@keyset/*` sources), with what it leaves to its reader made real (the README's sample is
 * whole but for each page's request URL; the pagination.md recipe gets a paginator, the URL
 * and its `db`), twice: the first page, then the page its `next` link points to.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mysqlUrl, postgresUrl, uniqueSchema } from '@keyset/test-support';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../packages/core/src/pagination/mysql.test-support.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, '.docs-run', `drizzle-${process.pid}`);
const RFC3339_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
/** Ten paid orders whose times share one millisecond, two by two, and one unpaid. */
const ROWS = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, createdAt: `2025-01-01 00:32:00.00${Math.floor(i / 2)}00${i % 2}`, status: 'paid' }));

/** The first ```ts block after `heading` in `file`. */
function recipe(file: string, heading: string): string {
  const page = readFileSync(join(root, file), 'utf8');
  const from = page.indexOf(heading);
  if (from < 0) throw new Error(`${file} has no "${heading}"`);
  const block = /^```ts\n([\s\S]*?)^```/m.exec(page.slice(from));
  if (block === null) throw new Error(`${file} has no ts block after "${heading}"`);
  return block[1]!;
}

const paginator = (name: string): string => `
import { createPaginator, cursorSecrets } from '@keyset/core';
const ${name} = createPaginator<{ id: string; createdAt: string }>({
  endpoint: 'GET /orders',
  sort: [
    { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
    { key: 'id', dir: 'desc', type: 'bigint', unique: true },
  ],
  limits: { default: 3 },
  cursor: { secrets: cursorSecrets(process.env.CURSOR_SECRET) },
});
`;
const url = `const url = new URL(process.env.PAGE_URL!);\n`;
const report = `\nconsole.log(JSON.stringify({ body, link: headers.link ?? null }));\nprocess.exit(0);\n`;

interface Page {
  body: { items: Array<{ id: string; createdAt: string }> };
  link: string | null;
}

const CURSOR_SECRET = randomBytes(32).toString('base64');

/** Runs `code` (written to `name`) with `env`, for the page at `pageUrl`. */
async function runPage(name: string, code: string, env: Record<string, string>, pageUrl: string): Promise<Page> {
  const file = join(dir, `${name}.mts`);
  writeFileSync(file, code);
  const { NODE_ENV: _n, ...inherited } = process.env;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...inherited, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'), CURSOR_SECRET, PAGE_URL: pageUrl, ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Page;
}

/** The first two pages a reader's server serves with the recipe: every timestamp RFC 3339, none skipped or repeated. */
async function walkTwoPages(name: string, code: string, env: Record<string, string>): Promise<void> {
  const first = await runPage(name, code, env, 'http://127.0.0.1/orders');
  expect(first.link).toMatch(/rel="next"/);
  const next = /<([^>]+)>;\s*rel="next"/.exec(first.link!)![1]!;
  const second = await runPage(name, code, env, new URL(next, 'http://127.0.0.1/orders').href);
  const items = [...first.body.items, ...second.body.items];
  for (const item of items) expect(item.createdAt).toMatch(RFC3339_MICROS);
  // Newest first, ids 10..5: rows two by two in one millisecond, none lost at the page edge.
  expect(items.map((item) => item.id)).toEqual(['10', '9', '8', '7', '6', '5']);
  expect(items[0]!.createdAt).toBe('2025-01-01T00:32:00.004001Z');
}

const database = await postgresUrl();
const mysqlServer = await mysqlUrl();

beforeAll(() => mkdirSync(dir, { recursive: true }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(database === undefined)('packages/drizzle/README.md: pg-core on node-postgres', () => {
  const schema = uniqueSchema('drizzle_recipe');
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: database, max: 1 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(`CREATE TABLE ${schema}.orders (id bigint PRIMARY KEY, created_at timestamptz(6) NOT NULL, status text NOT NULL)`);
    for (const row of [...ROWS, { id: 11, createdAt: '2025-01-02 00:00:00', status: 'new' }]) {
      await pool.query(`INSERT INTO ${schema}.orders VALUES ($1, $2::timestamp AT TIME ZONE 'UTC', $3)`, [row.id, row.createdAt, row.status]);
    }
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool?.end();
  });

  it('serves createdAt as RFC 3339 with its microseconds, and walks on', async () => {
    // The sample is whole (its pool on DATABASE_URL, its paginator, the request's URL): it
    // runs as written, but for the page size made small and the URL each page's request has.
    const code = recipe('packages/drizzle/README.md', '# @keyset/drizzle');
    const sized = code
      .replace("endpoint: 'GET /orders',", "endpoint: 'GET /orders',\n  limits: { default: 3 },")
      .replace(/^const url = new URL\(.*$/m, url.trimEnd());
    expect(sized).toContain(url.trimEnd());
    expect(sized).toContain('limits: { default: 3 }');
    const own = new URL(database!);
    own.searchParams.set('options', `-c search_path=${schema}`);
    await walkTwoPages('readme-pg', `${sized}${report}`, { DATABASE_URL: own.href });
  }, 120_000);
});

describe.skipIf(mysqlServer === undefined)('docs/pagination.md "Recipe: Drizzle": mysql-core on mysql2', () => {
  let own: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    own = await createTestDatabase(mysqlServer!, 'drizzle_recipe');
    const connection = await mysql.createConnection({ uri: own.url });
    try {
      await connection.query('CREATE TABLE orders (id BIGINT PRIMARY KEY, created_at DATETIME(6) NOT NULL, status VARCHAR(16) NOT NULL)');
      for (const row of [...ROWS, { id: 11, createdAt: '2025-01-02 00:00:00', status: 'new' }]) {
        await connection.query('INSERT INTO orders VALUES (?, ?, ?)', [row.id, row.createdAt, row.status]);
      }
    } finally {
      await connection.end();
    }
  }, 60_000);
  afterAll(async () => {
    await own?.drop();
  });

  it('serves createdAt as RFC 3339 with its microseconds, and walks on', async () => {
    const code = recipe('docs/pagination.md', '### Recipe: Drizzle');
    await walkTwoPages('pagination-mysql', `${paginator('orders')}${url}${code}${report}`, { DATABASE_URL: own.url });
  }, 120_000);
});
