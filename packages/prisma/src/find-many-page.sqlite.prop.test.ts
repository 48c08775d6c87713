/** Walk properties through findManyPage on SQLite via @prisma/adapter-better-sqlite3. */
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { concurrentWalk, staticWalk } from '../../core/src/pagination/dialect-walks.test-support.ts';
import { prismaSource, SQLITE_ITEMS_DDL } from './prisma-walks.test-support.ts';
import { PrismaClient } from './testing/generated/sqlite/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'keyset-prisma-'));
const file = join(dir, 'walk.db');
let prisma: PrismaClient;

beforeAll(() => {
  const db = new Database(file);
  db.exec(SQLITE_ITEMS_DDL);
  db.close();
  prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${file}` }) });
});

afterAll(async () => {
  await prisma?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('findManyPage on SQLite (Prisma, adapter-better-sqlite3)', () => {
  it('cursor walk yields every row once in sort order; offset walk (countRows total) agrees; walking back revisits the pages reversed', () => staticWalk(prismaSource(prisma, 'sqlite'), 20), 180_000);
  it('with inserts and deletes between pages, rows present throughout appear exactly once, forward and back', () => concurrentWalk(prismaSource(prisma, 'sqlite'), 15), 180_000);
});
