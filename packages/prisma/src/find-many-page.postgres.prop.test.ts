/** Walk properties through findManyPage on a real PostgreSQL server via @prisma/adapter-pg (skips when none answers). */
import { PrismaPg } from '@prisma/adapter-pg';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { ITEMS_DDL } from '../../core/src/pagination/walk.test-support.ts';
import { prismaSource } from './prisma-walks.test-support.ts';
import { PrismaClient } from './testing/generated/postgres/client.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_prisma_walk');
let prisma: PrismaClient;

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}; ${ITEMS_DDL}`);
  await admin.end();
  // The adapter's defaults otherwise: no type parsers, the server's TimeZone.
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }, { schema }) });
}, 60_000);

afterAll(async () => {
  if (url === undefined) return;
  await prisma.$executeRawUnsafe(`DROP SCHEMA ${schema} CASCADE`);
  await prisma.$disconnect();
});

describe.skipIf(url === undefined)('findManyPage on PostgreSQL (Prisma, adapter-pg)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(prismaSource(prisma, 'postgres', schema), 15), 180_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(prismaSource(prisma, 'postgres', schema), 15), 180_000);
});
