/** SQL walk properties through keysetWhere on PGlite (embedded PostgreSQL). */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalkProperty, staticWalkProperty } from './sql-walks.test-support.ts';
import { ITEMS_DDL } from './walk.test-support.ts';

let db: PGlite;

beforeAll(async () => {
  db = await createPglite();
  await db.exec(ITEMS_DDL);
}, 60_000);

afterAll(async () => {
  await db?.close();
});

describe('keysetWhere on PGlite', () => {
  it('cursor walk yields every row once in sort order; offset walk agrees; walking back revisits the pages in reverse', () => staticWalkProperty(db, 40), 60_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalkProperty(db, 40), 60_000);
});
