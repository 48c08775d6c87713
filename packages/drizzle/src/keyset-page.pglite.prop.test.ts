/** Walk properties through the Drizzle keysetPage on PGlite (embedded PostgreSQL). */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { drizzleSource } from './drizzle-walks.test-support.ts';

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
});
