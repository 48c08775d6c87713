/** Walk properties through the Drizzle keysetPage on PGlite (embedded PostgreSQL). */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { drizzleDefaultsSource, drizzleOffsetSource, drizzleSource } from './drizzle-walks.test-support.ts';

let client: PGlite;

beforeAll(async () => {
  client = await createPglite();
  await client.exec(ITEMS_DDL);
}, 60_000);

afterAll(async () => {
  await client?.close();
});

describe('Drizzle keysetPage on PGlite', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(drizzleSource(drizzle(client), 'postgres'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(drizzleOffsetSource(drizzle(client), 'postgres'), 20), 120_000);
});

describe('Drizzle keysetPage on PGlite with default column modes (Date timestamps, number ids): cursors from page.select', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(drizzleDefaultsSource(drizzle(client), 'postgres'), 15, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(drizzleDefaultsSource(drizzle(client), 'postgres'), 15, { wideDecimals: true }), 120_000);
});
