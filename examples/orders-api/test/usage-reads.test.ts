/**
 * Usage reads cannot take the database away from the API's requests, on every adapter:
 * while the reads in progress are stuck (the usage table locked by another session, as a
 * long read of a large range would hold them), at most USAGE_READ_CONNECTIONS run,
 * every read past that is refused at once with 429 `usage_reads_busy` and `Retry-After`,
 * and `GET /api/orders` still answers (the reads have connections of their own). A read
 * stuck longer than its own statement timeout answers 503. PostgreSQL only (the own pool
 * and timeout are PostgreSQL's); skips when TEST_DATABASE_URL answers nothing.
 */
import { postgresUrl } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_READ_CONNECTIONS } from '../src/db/database.ts';
import { ADAPTERS } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type Reply, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();

describe.skipIf(serverUrl === undefined)('usage reads beside the API (PostgreSQL, every adapter)', () => {
  const database = `orders_usage_reads_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: pg.Client;
  let locker: pg.Client;
  let t: TestApi;
  let adminKey: string;
  let reader: string;
  let owner: string;
  const urls: string[] = [];
  const extras: ExtraServer[] = [];

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    t = await startApi({ databaseUrl: url.href, seedOrders: 50, usageFlushMs: 3_600_000, logLevel: 'silent' });
    adminKey = t.api.adminKey!;
    urls.push(t.api.url);
    for (const adapter of ADAPTERS.filter((a) => a !== t.api.config.adapter)) {
      const extra = await serveAlso(t, adapter);
      extras.push(extra);
      urls.push(extra.url);
    }
    owner = `cust_${Math.random().toString(36).slice(2, 8)}`;
    expect((await call(t.api.url, '/api/owners', { key: adminKey, method: 'POST', body: { id: owner } })).status).toBe(201);
    const issued = await call(t.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'], ownerId: owner } });
    expect(issued.status).toBe(201);
    reader = issued.body.key;
    expect((await call(t.api.url, '/api/orders?limit=5', { key: reader })).status).toBe(200);
    await t.api.keys.usage.counter.flush();
    locker = new pg.Client({ connectionString: url.href });
    await locker.connect();
  }, 120_000);

  afterAll(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    await locker?.end().catch(() => undefined);
    await Promise.all(extras.map((s) => s.close()));
    await t?.stop({ remove: true }).catch(() => undefined);
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  /** The largest reads: a day of the owner's minutes, and the day's top keys by minute. */
  function largestRead(i: number): Promise<Reply> {
    const base = urls[i % urls.length]!;
    // 1,440 minutes: from the minute 1,439 minutes before this one, to now.
    const now = Date.now();
    const range = `interval=minute&from=${new Date(Math.floor(now / 60_000) * 60_000 - 1439 * 60_000).toISOString()}&to=${new Date(now).toISOString()}`;
    const path = i % 2 === 0 ? `/api/owners/${owner}/usage?${range}` : `/api/usage/top?${range}&limit=100`;
    return call(base, path, { key: adminKey });
  }

  /** Starts reads; resolves when `count` of them have answered, with every promise. */
  async function whenAnswered(replies: Promise<Reply>[], count: number): Promise<void> {
    let answered = 0;
    await new Promise<void>((resolve) => {
      for (const reply of replies) {
        void reply.finally(() => {
          if (++answered === count) resolve();
        });
      }
    });
  }

  it('past the limit, reads are refused at once with 429 usage_reads_busy and Retry-After; the API answers meanwhile', async () => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE keyset_usage IN ACCESS EXCLUSIVE MODE');
    const count = 6 * urls.length;
    const replies = Array.from({ length: count }, (_, i) => largestRead(i));
    try {
      // Every read past the limit answers without waiting for the ones held by the lock.
      await whenAnswered(replies, count - USAGE_READ_CONNECTIONS);
      const orders = await Promise.all(urls.map((base) => call(base, '/api/orders?limit=5', { key: reader })));
      expect(orders.map((r) => r.status)).toEqual(urls.map(() => 200));
    } finally {
      await locker.query('COMMIT');
    }
    const all = await Promise.all(replies);
    const busy = all.filter((r) => r.status === 429);
    expect(all.filter((r) => r.status === 200)).toHaveLength(USAGE_READ_CONNECTIONS);
    expect(busy).toHaveLength(count - USAGE_READ_CONNECTIONS);
    for (const reply of busy) {
      expect(reply.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.body).toMatchObject({ status: 429, code: 'usage_reads_busy', retry_after: 1 });
    }
    // Every adapter refused some (six each, one admitted in all).
    for (let a = 0; a < urls.length; a++) expect(all.filter((r, i) => i % urls.length === a && r.status === 429).length, urls[a]).toBeGreaterThan(0);
  }, 60_000);

  it('a read held past its own statement timeout answers 503 unavailable, while the API keeps answering', async () => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE keyset_usage IN ACCESS EXCLUSIVE MODE');
    let held: Reply[];
    try {
      const replies = [largestRead(0)];
      const orders = await call(t.api.url, '/api/orders?limit=5', { key: reader });
      expect(orders.status).toBe(200);
      held = await Promise.all(replies);
    } finally {
      await locker.query('COMMIT');
    }
    expect(held.map((reply) => reply.body)).toMatchObject([{ status: 503, code: 'unavailable' }]);
    // And once the table is free, the same reads answer.
    expect((await largestRead(0)).status).toBe(200);
    expect((await largestRead(1)).status).toBe(200);
  }, 60_000);
});
