/**
 * findManyPage and countRows on a real PostgreSQL server (adapter-pg at its defaults) and on
 * SQLite (adapter-better-sqlite3): the cases the walk properties find only by chance, spelt out.
 */
import { ConfigError, createPaginator, type PagePlan, type SortKey } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from './count-rows.ts';
import { findManyPage } from './find-many-page.ts';
import { SQLITE_ITEMS_DDL } from './prisma-walks.test-support.ts';
import { PrismaClient } from './testing/generated/postgres/client.ts';
import { PrismaClient as SqliteClient } from './testing/generated/sqlite/client.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_prisma_page');
let prisma: PrismaClient;
const SECRET = 'a-prisma-page-test-secret-of-at-least-32-bytes';

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.items (id bigint PRIMARY KEY, tenant int NOT NULL, created_at timestamptz NOT NULL, grp int NOT NULL, score numeric, label text COLLATE "C", flag boolean NOT NULL)`);
  await admin.query(`CREATE TABLE ${schema}.other_items (LIKE ${schema}.items)`);
  await admin.query(`CREATE TABLE ${schema}.notes (id bigint PRIMARY KEY, item_id bigint NOT NULL REFERENCES ${schema}.items ON DELETE CASCADE, text text NOT NULL)`);
  await admin.end();
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }, { schema }) });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await prisma.$executeRawUnsafe(`DROP SCHEMA ${schema} CASCADE`);
  await prisma.$disconnect();
});

type Row = { id: bigint; tenant?: number; createdAt: string; label?: string | null };

/** Inserts rows with exact timestamp text (a Date would drop the microseconds). */
async function insert(rows: readonly { id: bigint | string; createdAt: string; tenant?: number; label?: string | null; score?: string | null }[]): Promise<void> {
  await prisma.item.deleteMany();
  for (const r of rows) {
    await prisma.$executeRawUnsafe(
      `INSERT INTO "${schema}".items (id, tenant, created_at, grp, score, label, flag) VALUES ($1::bigint, $2, $3::timestamptz, 0, $4::numeric, $5, false)`,
      String(r.id), r.tenant ?? 1, r.createdAt, r.score ?? null, r.label ?? null,
    );
  }
}

/** Every page forward through `nextCursor`, then back from the last through `prevCursor`: ids per page. */
async function walk(sort: SortKey[], limit: number, fetch: (plan: PagePlan) => Promise<Row[]>): Promise<{ forward: string[][]; backward: string[][] }> {
  const paginator = createPaginator<Row>({ endpoint: 'GET /items', sort, cursor: { secrets: [SECRET] } });
  const forward: string[][] = [];
  const pages: { prevCursor: string | null }[] = [];
  let query = new URLSearchParams({ limit: String(limit) });
  for (;;) {
    const plan = await paginator.plan(query);
    const { body } = await paginator.page(plan, await fetch(plan), { url: 'https://api.test/items' });
    if (!('nextCursor' in body)) throw new Error('expected a cursor page');
    forward.push(body.items.map((r) => String(r.id)));
    pages.push(body);
    if (body.nextCursor === null) break;
    query = new URLSearchParams({ limit: String(limit), cursor: body.nextCursor });
  }
  // The last page as reached forward, then each page before it through prevCursor.
  const backward: string[][] = [forward[forward.length - 1]!];
  let prev = pages[pages.length - 1]!.prevCursor;
  while (prev !== null) {
    const plan = await paginator.plan(new URLSearchParams({ limit: String(limit), cursor: prev }));
    const { body } = await paginator.page(plan, await fetch(plan), { url: 'https://api.test/items' });
    if (!('prevCursor' in body)) throw new Error('expected a cursor page');
    backward.unshift(body.items.map((r) => String(r.id)));
    prev = body.prevCursor;
  }
  return { forward, backward };
}

const byTime: SortKey[] = [
  { key: 'createdAt', column: 'created_at', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'asc', type: 'bigint', unique: true },
];

describe.skipIf(url === undefined)('findManyPage on PostgreSQL (adapter-pg, no type parsers)', () => {
  const exact = () => ({ client: prisma, table: `${schema}.items` });

  it('walks microsecond timestamps that share a millisecond exactly, both ways, with the microseconds in the items', async () => {
    // Five rows in one millisecond, in an order the ids do not follow, around rows of the neighbouring milliseconds.
    await insert([
      { id: 1n, createdAt: '2025-03-01 12:00:00.123004+00' },
      { id: 2n, createdAt: '2025-03-01 12:00:00.123001+00' },
      { id: 3n, createdAt: '2025-03-01 12:00:00.123999+00' },
      { id: 4n, createdAt: '2025-03-01 12:00:00.123001+00' },
      { id: 5n, createdAt: '2025-03-01 12:00:00.123500+00' },
      { id: 6n, createdAt: '2025-03-01 12:00:00.124+00' },
      { id: 7n, createdAt: '2025-03-01 12:00:00.122999+00' },
      { id: 8n, createdAt: '2025-03-01 12:00:00.123+00' },
    ]);
    const seen: string[] = [];
    const { forward, backward } = await walk(byTime, 2, async (plan) => {
      const rows = await findManyPage(prisma.item, plan, { select: { id: true, createdAt: true } }, { sort: plan.sort, dialect: 'postgres', timestamps: exact() });
      seen.push(...rows.map((r) => String(r.createdAt)));
      return rows as Row[];
    });
    expect(forward).toEqual([['6', '3'], ['5', '1'], ['2', '4'], ['8', '7']]);
    expect(backward).toEqual(forward);
    expect(seen).toContain('2025-03-01T12:00:00.123004Z');
    expect(seen).toContain('2025-03-01T12:00:00.123999Z');
  });

  it('refuses a timestamp sort key on the first page when it cannot read microseconds, naming both ways out', async () => {
    await insert([{ id: 1n, createdAt: '2025-03-01 12:00:00.123004+00' }]);
    const paginator = createPaginator<Row>({ endpoint: 'GET /items', sort: byTime, cursor: { secrets: [SECRET] } });
    const plan = await paginator.plan(new URLSearchParams());
    await expect(findManyPage(prisma.item, plan, {}, { sort: plan.sort, dialect: 'postgres' })).rejects.toThrow(/skip or repeat rows sharing a millisecond: pass timestamps: \{ client: prisma, table: '<table>' \}/);
  });

  it('keeps bigints past 2^53 exact in the condition and the rows', async () => {
    const base = 2n ** 53n;
    await insert([base + 3n, base + 1n, base + 2n, base - 1n].map((id) => ({ id, createdAt: '2025-03-01 12:00:00+00' })));
    const sort: SortKey[] = [{ key: 'id', dir: 'asc', type: 'bigint', unique: true }];
    const { forward } = await walk(sort, 1, async (plan) => (await findManyPage(prisma.item, plan, {}, { sort: plan.sort, dialect: 'postgres', timestamps: exact() })) as Row[]);
    expect(forward).toEqual([[String(base - 1n)], [String(base + 1n)], [String(base + 2n)], [String(base + 3n)]]);
  });

  it('puts NULLs where the spec says under mixed directions, both ways', async () => {
    await insert([
      { id: 1n, createdAt: '2025-03-01 12:00:00+00', label: 'b' },
      { id: 2n, createdAt: '2025-03-01 12:00:00+00', label: null },
      { id: 3n, createdAt: '2025-03-01 12:00:00+00', label: 'a' },
      { id: 4n, createdAt: '2025-03-01 12:00:00+00', label: null },
      { id: 5n, createdAt: '2025-03-01 12:00:00+00', label: 'b' },
    ]);
    const fetch = async (plan: PagePlan) => (await findManyPage(prisma.item, plan, {}, { sort: plan.sort, dialect: 'postgres', timestamps: exact() })) as Row[];
    const last = await walk([{ key: 'label', dir: 'desc', type: 'string', nullable: { nulls: 'last' } }, { key: 'id', dir: 'asc', type: 'bigint', unique: true }], 2, fetch);
    expect(last.forward.flat()).toEqual(['1', '5', '3', '2', '4']);
    expect(last.backward).toEqual(last.forward);
    const first = await walk([{ key: 'label', dir: 'asc', type: 'string', nullable: { nulls: 'first' } }, { key: 'id', dir: 'desc', type: 'bigint', unique: true }], 2, fetch);
    expect(first.forward.flat()).toEqual(['4', '2', '3', '5', '1']);
    expect(first.backward).toEqual(first.forward);
  });

  it('ANDs the page with the caller\'s where, keeps its select, and counts what the where matches', async () => {
    await insert([
      { id: 1n, createdAt: '2025-03-01 12:00:00.000001+00', tenant: 1 },
      { id: 2n, createdAt: '2025-03-01 12:00:00.000002+00', tenant: 2 },
      { id: 3n, createdAt: '2025-03-01 12:00:00.000003+00', tenant: 1 },
      { id: 4n, createdAt: '2025-03-01 12:00:00.000004+00', tenant: 2 },
      { id: 5n, createdAt: '2025-03-01 12:00:00.000005+00', tenant: 1 },
    ]);
    const where = { tenant: 2, OR: [{ label: null }, { label: 'x' }] };
    const { forward } = await walk(byTime, 1, async (plan) => {
      const rows = await findManyPage(prisma.item, plan, { where, select: { id: true, createdAt: true, tenant: true } }, { sort: plan.sort, dialect: 'postgres', timestamps: exact() });
      for (const r of rows) expect(Object.keys(r).sort()).toEqual(['createdAt', 'id', 'tenant']);
      return rows as Row[];
    });
    expect(forward).toEqual([['4'], ['2']]);
    expect(await countRows(prisma.item, { tenant: 1 })).toBe(3);
    expect(await countRows(prisma.item, { tenant: 1 }, { limit: 2 })).toBe(2);
    expect(await countRows(prisma.item, undefined)).toBe(5);
  });

  it('keeps the caller\'s include: each row of a page carries its relations', async () => {
    await insert([1, 2, 3].map((n) => ({ id: BigInt(n), createdAt: `2025-03-01 12:00:00.00000${n}+00` })));
    await prisma.note.createMany({ data: [{ id: 10n, itemId: 1n, text: 'one' }, { id: 11n, itemId: 3n, text: 'three' }, { id: 12n, itemId: 3n, text: 'three again' }] });
    const seen: [string, string[]][] = [];
    await walk(byTime, 2, async (plan) => {
      const rows = await findManyPage(prisma.item, plan, { include: { notes: { orderBy: { id: 'asc' } } } }, { sort: plan.sort, dialect: 'postgres', timestamps: exact() });
      seen.push(...rows.map((r): [string, string[]] => [String(r.id), r.notes.map((n) => n.text)]));
      return rows as Row[];
    });
    expect(seen.slice(0, 3)).toEqual([['3', ['three', 'three again']], ['2', []], ['1', ['one']]]);
  });

  it('serves offset pages with skip and take in the sort order, timestamps exact', async () => {
    await insert([1, 2, 3, 4, 5].map((n) => ({ id: BigInt(n), createdAt: `2025-03-01 12:00:00.00000${n}+00` })));
    const paginator = createPaginator<Row>({ endpoint: 'GET /items', sort: byTime, cursor: { secrets: [SECRET] } });
    const plan = await paginator.plan(new URLSearchParams({ offset: '1', limit: '2' }));
    const rows = await findManyPage(prisma.item, plan, {}, { sort: plan.sort, dialect: 'postgres', timestamps: exact() });
    // take is limit + 1: the extra row tells the paginator there is more.
    expect(rows.map((r) => [String(r.id), r.createdAt])).toEqual([
      ['4', '2025-03-01T12:00:00.000004Z'],
      ['3', '2025-03-01T12:00:00.000003Z'],
      ['2', '2025-03-01T12:00:00.000002Z'],
    ]);
  });

  it('refuses what belongs to the page, a misspelt option, and a plan of another sort', async () => {
    const paginator = createPaginator<Row>({ endpoint: 'GET /items', sort: byTime, cursor: { secrets: [SECRET] } });
    const plan = await paginator.plan(new URLSearchParams());
    const options = { sort: plan.sort, dialect: 'postgres' as const, timestamps: exact() };
    await expect(findManyPage(prisma.item, plan, { orderBy: { id: 'asc' } }, options)).rejects.toThrow(/orderBy belongs to the page/);
    await expect(findManyPage(prisma.item, plan, { take: 5 }, options)).rejects.toThrow(/take belongs to the page/);
    await expect(findManyPage(prisma.item, plan, { omit: { createdAt: true } }, options)).rejects.toThrow(/sort field createdAt is omitted/);
    await expect(findManyPage(prisma.item, plan, { select: { id: true, tenant: true } }, options)).rejects.toThrow(/select the sort field createdAt/);
    await expect(findManyPage(prisma.item, plan, {}, { ...options, timestamp: exact() } as never)).rejects.toThrow(ConfigError);
    await expect(findManyPage(prisma.item, plan, {}, { ...options, timestamps: { client: prisma, table: 'items; drop table items' } })).rejects.toThrow(/not a plain SQL name/);
    await insert([{ id: 1n, createdAt: '2025-03-01 12:00:00+00' }]);
    await expect(findManyPage(prisma.item, plan, {}, { ...options, timestamps: { client: prisma, table: `${schema}.other_items` } })).rejects.toThrow(/check that timestamps.table is the model's table/);
    const other: SortKey[] = [{ key: 'id', dir: 'asc', type: 'bigint', unique: true }];
    await expect(findManyPage(prisma.item, plan, {}, { ...options, sort: other })).rejects.toThrow(TypeError);
  });
});

describe('findManyPage on SQLite (adapter-better-sqlite3)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keyset-prisma-page-'));
  const file = join(dir, 'page.db');
  let sqlite: SqliteClient;
  beforeAll(() => {
    const db = new Database(file);
    db.exec(SQLITE_ITEMS_DDL);
    db.close();
    sqlite = new SqliteClient({ adapter: new PrismaBetterSqlite3({ url: `file:${file}` }) });
  });
  afterAll(async () => {
    await sqlite?.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('walks millisecond timestamps (what Prisma stores there) and ids past 2^53, both ways, with no timestamps option', async () => {
    const base = 2n ** 53n;
    const at = (ms: number) => new Date(Date.UTC(2025, 2, 1, 12) + ms);
    await sqlite.item.createMany({
      data: [
        { id: base + 1n, tenant: 1, createdAt: at(1), grp: 0, flag: false },
        { id: base + 2n, tenant: 1, createdAt: at(2), grp: 0, flag: true },
        { id: base + 3n, tenant: 1, createdAt: at(1), grp: 0, flag: false },
        { id: base - 1n, tenant: 1, createdAt: at(0), grp: 0, flag: true },
      ],
    });
    const { forward, backward } = await walk(byTime, 1, async (plan) => (await findManyPage(sqlite.item, plan, {}, { sort: plan.sort, dialect: 'sqlite' })) as Row[]);
    expect(forward.flat()).toEqual([base + 2n, base + 1n, base + 3n, base - 1n].map(String));
    expect(backward).toEqual(forward);
    const plan = await createPaginator<Row>({ endpoint: 'GET /items', sort: byTime, cursor: { secrets: [SECRET] } }).plan(new URLSearchParams());
    await expect(findManyPage(sqlite.item, plan, {}, { sort: plan.sort, dialect: 'sqlite', timestamps: { client: sqlite, table: 'items' } })).rejects.toThrow(/SQLite/);
  });
});
