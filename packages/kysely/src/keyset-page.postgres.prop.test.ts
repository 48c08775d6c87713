/** Walk properties through keysetPage on a real PostgreSQL server via pg (skips when none answers). */
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { kyselyDefaultsSource, kyselyOffsetSource, kyselySource, type WalkDB } from './kysely-walks.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_kysely_walk');
let db: Kysely<WalkDB>;
/** The same table through a pool left at pg's defaults: timestamptz as a Date, no type parser. */
let defaults: Kysely<WalkDB>;

// timestamptz as PostgreSQL's text: pg's default Date would drop the microseconds.
const TIMESTAMPTZ = 1184;
const textTimestamps = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ ? (text: string) => text : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema} -c TimeZone=UTC`, types: textTimestamps });
  await pool.query(ITEMS_DDL);
  db = new Kysely<WalkDB>({ dialect: new PostgresDialect({ pool }) });
  defaults = new Kysely<WalkDB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` }) }) });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.schema.dropSchema(schema).cascade().execute();
  await db.destroy();
  await defaults.destroy();
});

describe.skipIf(url === undefined)('keysetPage on PostgreSQL (pg)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(kyselySource(db, 'postgres'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(kyselyOffsetSource(db, 'postgres'), 30), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselySource(db, 'postgres'), 20), 120_000);
});

describe.skipIf(url === undefined)('keysetPage on PostgreSQL (pg) at the driver\'s defaults: cursors from keysetPage\'s own exact values', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(kyselyDefaultsSource(defaults, 'postgres'), 20, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselyDefaultsSource(defaults, 'postgres'), 20, { wideDecimals: true }), 120_000);
});
