/**
 * A connection walked over HTTP (graphql-yoga) on a real PostgreSQL server (pg), forward
 * and backward, with rows inserted and deleted between pages by another connection: every
 * row present throughout exactly once, none twice. Skips when no server answers at
 * TEST_DATABASE_URL (fails under CI=true).
 */
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ORDERS_DDL, startOrdersServer, walk, walkArbs } from './connection-walks.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_graphql_walk');
/** The server's connections, and the writer's: a separate pool, as another client. */
let served: pg.Pool;
let writer: pg.Pool;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  if (url === undefined) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  served = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  writer = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` });
  await writer.query(ORDERS_DDL);
  server = await startOrdersServer(served);
}, 60_000);
afterAll(async () => {
  if (url === undefined) return;
  await server?.close();
  await served?.end();
  await writer?.query(`DROP SCHEMA ${schema} CASCADE`);
  await writer?.end();
});

describe.skipIf(url === undefined)('a connection on PostgreSQL over HTTP, with inserts and deletes between pages', () => {
  it('forward (first/after): every row present throughout once, in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...walkArbs, (initial, size, writes) => walk(writer, server.url, 'forward', initial, size, writes)), { numRuns: 20 }), 120_000);
  it('backward (last/before): every row present throughout once, edges in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...walkArbs, (initial, size, writes) => walk(writer, server.url, 'backward', initial, size, writes)), { numRuns: 20 }), 120_000);
});
