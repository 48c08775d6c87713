/**
 * A connection walked over HTTP (graphql-yoga) on PGlite, forward and backward, with rows
 * inserted and deleted between pages: every row present throughout exactly once, none twice.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ORDERS_DDL, startOrdersServer, walk, walkArbs } from './connection-walks.test-support.ts';

let db: PGlite;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  db = await createPglite();
  await db.exec(ORDERS_DDL);
  server = await startOrdersServer(db);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await db?.close();
});

describe('a connection on PGlite over HTTP, with inserts and deletes between pages', () => {
  it('forward (first/after): every row present throughout once, in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...walkArbs, (initial, size, writes) => walk(db, server.url, 'forward', initial, size, writes)), { numRuns: 20 }), 120_000);
  it('backward (last/before): every row present throughout once, edges in sort order, no duplicates', () =>
    fc.assert(fc.asyncProperty(...walkArbs, (initial, size, writes) => walk(db, server.url, 'backward', initial, size, writes)), { numRuns: 20 }), 120_000);
});
