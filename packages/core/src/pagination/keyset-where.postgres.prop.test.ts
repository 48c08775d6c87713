/** SQL walk properties through keysetWhere on a real PostgreSQL server (skips when none answers). */
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalkProperty, staticWalkProperty } from './sql-walks.test-support.ts';
import { ITEMS_DDL } from './walk.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_walk');
let db: pg.Client;

beforeAll(async () => {
  if (url === undefined) return;
  db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(`SET search_path TO ${schema}`);
  await db.query(ITEMS_DDL);
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
  await db.end();
});

describe.skipIf(url === undefined)('keysetWhere on PostgreSQL', () => {
  it('cursor walk yields every row once in sort order; offset walk agrees; walking back revisits the pages in reverse', () => staticWalkProperty(db, 40), 60_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalkProperty(db, 40), 60_000);
});
