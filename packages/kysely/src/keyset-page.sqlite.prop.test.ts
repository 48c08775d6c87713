/** Walk properties through keysetPage on SQLite via better-sqlite3. */
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { kyselyDefaultsSource, kyselyOffsetSource, kyselySource, SQLITE_ITEMS_DDL, type WalkDB } from './kysely-walks.test-support.ts';

let db: Kysely<WalkDB>;
/** A database left at better-sqlite3's defaults: INTEGER and REAL as JS numbers. */
let defaults: Kysely<WalkDB>;

beforeAll(() => {
  const sqlite = new Database(':memory:');
  // Integers as BigInt: ids past 2^53 stay exact.
  sqlite.defaultSafeIntegers(true);
  sqlite.exec(SQLITE_ITEMS_DDL);
  db = new Kysely<WalkDB>({ dialect: new SqliteDialect({ database: sqlite }) });
  const plain = new Database(':memory:');
  plain.exec(SQLITE_ITEMS_DDL);
  defaults = new Kysely<WalkDB>({ dialect: new SqliteDialect({ database: plain }) });
});

afterAll(async () => {
  await db?.destroy();
  await defaults?.destroy();
});

describe('keysetPage on SQLite (better-sqlite3)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(kyselySource(db, 'sqlite'), 30), 120_000);
  it('offset pages (SQLite keeps the plain OFFSET) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(kyselyOffsetSource(db, 'sqlite'), 40), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselySource(db, 'sqlite'), 20), 120_000);
});

describe('keysetPage on SQLite (better-sqlite3) at the driver\'s defaults: cursors from keysetPage\'s own exact values', () => {
  it('ids past 2^53 (a JS number would round them): every row once in sort order, forward and back', () => staticWalk(kyselyDefaultsSource(defaults, 'sqlite'), 30), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselyDefaultsSource(defaults, 'sqlite'), 20), 120_000);
});
