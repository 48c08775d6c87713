/**
 * The documented way to lossless ISO timestamps with pg and Kysely: the `isoTimestamp`
 * type parser this package exports (docs/pagination.md's recipe imports it), on a session
 * in another time zone than UTC. On a real PostgreSQL (skips when none answers) and on PGlite: every `createdAt` of a cursor walk through `keysetPage` is
 * ISO 8601 with six fractional digits and equals the stored value to the microsecond,
 * rows 1 µs apart and ties included, and the walk yields every row exactly once.
 */
import { type PGlite, types } from '@electric-sql/pglite';
import { createPaginator } from '@keyset/core';
import { postgresUrl, uniqueSchema, createPglite } from '@keyset/test-support';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetPage } from './keyset-page.ts';
import { isoTimestamp } from './index.ts';
import { pgliteDialect } from './kysely-walks.test-support.ts';

const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

interface DB {
  events: { id: string; created_at: string };
}

const DDL = 'CREATE TABLE events (id bigint PRIMARY KEY, created_at timestamptz NOT NULL)';
// Ties, 1 µs apart, no fraction at all, trailing zeros PostgreSQL drops, and what only
// PostgreSQL's own text can say (kept as printed).
const VALUES = [
  '2025-01-01 00:00:00.123789+00',
  '2025-01-01 00:00:00.123789+00',
  '2025-01-01 00:00:00.123790+00',
  '2025-01-01 00:00:00.123788+00',
  '2025-01-01 00:00:00+00',
  '2025-01-01 00:00:00.1+00',
  '2025-01-01 00:00:00.000001+00',
  '2024-12-31 23:59:59.999999+00',
  '2025-06-01 12:00:00.5+05:45',
  '1999-12-31 23:59:59.99999-08:00',
  'infinity',
  '-infinity',
  '0044-03-15 12:00:00+00 BC',
  '10000-01-01 00:00:00+00',
];

async function seed(db: Kysely<DB>): Promise<void> {
  await sql.raw(DDL).execute(db);
  await db
    .insertInto('events')
    .values(VALUES.map((at, i) => ({ id: String(i + 1), created_at: at })))
    .execute();
}

/** Walks the events newest first, four a page, by nextCursor; the items in walk order. */
async function walk(db: Kysely<DB>): Promise<Array<{ id: string; createdAt: string }>> {
  const events = createPaginator<{ id: string; createdAt: string }>({
    endpoint: 'GET /events',
    sort: [
      { key: 'createdAt', column: 'e.created_at', dir: 'desc', type: 'timestamp' },
      { key: 'id', column: 'e.id', dir: 'desc', type: 'bigint', unique: true },
    ],
    limits: { default: 4, max: 4 },
    cursor: { secrets: ['iso-timestamps-test-secret-32-bytes!'] },
  });
  const seen: Array<{ id: string; createdAt: string }> = [];
  let cursor: string | null = null;
  do {
    const plan = await events.plan(new URLSearchParams(cursor === null ? {} : { cursor }));
    const rows = await keysetPage(db.selectFrom('events as e').select(['e.id', 'e.created_at as createdAt']), plan, plan.sort, 'postgres').execute();
    const { body } = await events.page(plan, rows, { url: new URL('https://api.test/events') });
    seen.push(...(body.items as Array<{ id: string; createdAt: string }>));
    cursor = (body as { nextCursor: string | null }).nextCursor;
  } while (cursor !== null);
  return seen;
}

/** The walk against what the database holds: order, every row once, every value exact. */
async function expectLossless(db: Kysely<DB>): Promise<void> {
  const seen = await walk(db);
  const { rows: expected } = await sql<{ id: string; iso: string | null; text: string }>`
    SELECT id::text AS id, created_at::text AS text,
      CASE WHEN isfinite(created_at) AND created_at >= '0001-01-01Z' AND created_at < '10000-01-01Z'
        THEN to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') END AS iso
    FROM events ORDER BY created_at DESC, id DESC`.execute(db);
  expect(seen.map((row) => String(row.id))).toEqual(expected.map((row) => row.id)); // PGlite reads int8 as a number
  for (const [i, row] of seen.entries()) {
    const { iso, text } = expected[i]!;
    // Years 1-9999 AD: ISO 8601 with all six digits, the stored microseconds exactly.
    if (iso !== null) {
      expect(row.createdAt).toMatch(ISO_MICROS);
      expect(row.createdAt).toBe(iso);
    } else {
      expect(row.createdAt).toBe(text); // infinity, BC, year 10000: as PostgreSQL prints them
    }
  }
}

describe('isoTimestamp, as @keyset/kysely exports it', () => {
  it.each([
    ['2025-01-01 00:00:00.123789+00', '2025-01-01T00:00:00.123789Z'],
    ['2025-01-01 00:00:00+00', '2025-01-01T00:00:00.000000Z'],
    ['2025-01-01 00:00:00.1+00', '2025-01-01T00:00:00.100000Z'],
    ['infinity', 'infinity'],
    ['0044-03-15 12:00:00+00 BC', '0044-03-15 12:00:00+00 BC'],
    ['10000-01-01 00:00:00+00', '10000-01-01 00:00:00+00'],
    // A session not in UTC: the same instant, in UTC.
    ['2025-01-01 05:45:00.123789+05:45', '2025-01-01T00:00:00.123789Z'],
  ])('%s → %s', (text, iso) => expect(isoTimestamp(text)).toBe(iso));
});

const url = await postgresUrl();
const schema = uniqueSchema('keyset_kysely_iso');

describe.skipIf(url === undefined)('pg with isoTimestamp, the session in Asia/Kathmandu (real PostgreSQL)', () => {
  let db: Kysely<DB>;
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const TIMESTAMPTZ = 1184;
    const pool = new pg.Pool({
      connectionString: url,
      max: 2,
      // A zone 5:45 east of UTC (the parser must not depend on the session's zone), and a
      // schema of the test's own.
      options: `-c TimeZone=Asia/Kathmandu -c search_path=${schema}`,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === TIMESTAMPTZ ? isoTimestamp : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
      },
    });
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    await seed(db);
  }, 60_000);
  afterAll(async () => {
    if (db === undefined) return;
    await db.schema.dropSchema(schema).cascade().execute();
    await db.destroy();
  });

  it('a cursor walk yields every row once, each createdAt ISO with the stored microseconds', () => expectLossless(db), 60_000);
});

describe('PGlite with parsers: { [types.TIMESTAMPTZ]: isoTimestamp }', () => {
  let client: PGlite;
  let db: Kysely<DB>;
  beforeAll(async () => {
    client = await createPglite({ parsers: { [types.TIMESTAMPTZ]: isoTimestamp } });
    db = new Kysely<DB>({ dialect: pgliteDialect(client) as never });
    await seed(db);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    if (client !== undefined && !client.closed) await client.close();
  });

  it('a cursor walk yields every row once, each createdAt ISO with the stored microseconds', () => expectLossless(db), 60_000);
});
