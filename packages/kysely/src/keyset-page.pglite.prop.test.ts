/** Walk properties through keysetPage on PGlite (embedded PostgreSQL). */
import { type PGlite, types } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { offsetPagesAgree } from '../../core/src/pagination/offset-pages.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { kyselyDefaultsSource, kyselyOffsetSource, kyselySource, pgliteDialect, type WalkDB } from './kysely-walks.test-support.ts';

let client: PGlite;
let db: Kysely<WalkDB>;
/** An instance left at PGlite's defaults (no `parsers`): timestamptz as a Date. */
let plain: PGlite;
let defaults: Kysely<WalkDB>;

beforeAll(async () => {
  // timestamptz as text: a Date would drop the microseconds the walk depends on.
  client = await createPglite({ parsers: { [types.TIMESTAMPTZ]: (text: string) => text } });
  await client.exec(ITEMS_DDL);
  db = new Kysely<WalkDB>({ dialect: pgliteDialect(client) });
  plain = await createPglite();
  await plain.exec(ITEMS_DDL);
  defaults = new Kysely<WalkDB>({ dialect: pgliteDialect(plain) });
}, 60_000);

afterAll(async () => {
  await db?.destroy();
  await client?.close();
  await defaults?.destroy();
  await plain?.close();
});

describe('keysetPage on PGlite', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(kyselySource(db, 'postgres'), 20), 120_000);
  it('offset pages (a deferred join past the first row) equal the plain OFFSET query\'s, row for row, in every sort, filter and offset', () => offsetPagesAgree(kyselyOffsetSource(db, 'postgres'), 20), 120_000);
});

describe('keysetPage on PGlite at the driver\'s defaults: cursors from keysetPage\'s own exact values', () => {
  it('µs timestamps within one millisecond, ids past 2^53, decimals wider than a double: every row once in sort order, forward and back', () => staticWalk(kyselyDefaultsSource(defaults, 'postgres'), 15, { wideDecimals: true }), 120_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(kyselyDefaultsSource(defaults, 'postgres'), 15, { wideDecimals: true }), 120_000);
});
