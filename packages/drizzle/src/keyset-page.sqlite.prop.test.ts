/** Walk properties through the Drizzle keysetPage on SQLite via better-sqlite3. */
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { SQLITE_ITEMS_DDL } from '../../kysely/src/kysely-walks.test-support.ts';
import { drizzleDefaultsSource, drizzleOffsetSource, drizzleSource } from './drizzle-walks.test-support.ts';

let sqlite: Database.Database;

beforeAll(() => {
  sqlite = new Database(':memory:');
  sqlite.exec(SQLITE_ITEMS_DDL);
});

afterAll(() => {
  sqlite?.close();
});

describe('Drizzle keysetPage on SQLite (better-sqlite3)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(drizzleSource(drizzle({ client: sqlite }), 'sqlite'), 30), 120_000);
  it('offset pages (SQLite keeps the plain OFFSET) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(drizzleOffsetSource(drizzle({ client: sqlite }), 'sqlite'), 40), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleSource(drizzle({ client: sqlite }), 'sqlite'), 20), 120_000);
});

describe('Drizzle keysetPage on SQLite (better-sqlite3) at the driver\'s defaults (integer ids as JS numbers): cursors from page.select', () => {
  it('ids past 2^53 (a JS number would round them): every row once in sort order, forward and back', () => staticWalk(drizzleDefaultsSource(drizzle({ client: sqlite }), 'sqlite'), 30), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleDefaultsSource(drizzle({ client: sqlite }), 'sqlite'), 20), 120_000);
});
