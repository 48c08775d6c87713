import type { PGlite } from '@electric-sql/pglite';
import { ConfigError, createUsageCounter, isKeysetError } from '@keyset/core';
import { createPglite, describeUsageStore, postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresUsageStore } from './postgres-usage-store.ts';
import type { UsageStore } from '@keyset/core';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_usage');
let n = 0;
const freshId = (): string => `id_${process.pid}_${n++}`;

describe.skipIf(url === undefined)('createPostgresUsageStore (real PostgreSQL, pooled connections)', () => {
  let pool: pg.Pool;
  let store: UsageStore;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: url, max: 6 });
    await migrate(pool, { schema });
    store = createPostgresUsageStore({ client: pool, schema });
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  // Concurrent batches and counters run on different connections at once.
  describeUsageStore('PostgreSQL (pg Pool of 6)', () => ({ store, freshId }), { runs: 8 });

  it('a flush is one statement, whatever the number of keys and minutes', async () => {
    const texts: string[] = [];
    const counting = createPostgresUsageStore({ client: { query: (text: string, params?: unknown[]) => (texts.push(text), pool.query(text, params)) }, schema });
    let now = Date.UTC(2031, 0, 1);
    const counter = createUsageCounter({ store: counting, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false });
    for (let i = 0; i < 500; i++) {
      counter.record({ keyId: `key_${i}`, ownerId: 'owner_1', outcome: 'allowed', policy: 'default', cost: 1, remaining: 0 });
      now += 1000;
    }
    await counter.close();
    expect(texts).toHaveLength(1);
  });

  it('a database that fails → KeysetError unavailable; the counter keeps the deltas and the next flush writes them', async () => {
    let failing = true;
    const flaky = createPostgresUsageStore({
      client: { query: (text: string, params?: unknown[]) => (failing ? Promise.reject(new Error('connection refused')) : pool.query(text, params)) },
      schema,
    });
    const keyId = freshId();
    const now = Date.UTC(2032, 0, 1);
    const warnings: string[] = [];
    const counter = createUsageCounter({ store: flaky, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, logger: { warn: (_d, m) => warnings.push(m) } });
    counter.record({ keyId, outcome: 'allowed', policy: 'default', cost: 2, remaining: 0 });
    const error = await counter.flush().catch((e: unknown) => e);
    expect(isKeysetError(error) && error.code).toBe('unavailable');
    counter.record({ keyId, outcome: 'rate_limited', policy: 'default', cost: 0, remaining: 0 });
    failing = false;
    await counter.close();
    const [bucket] = await store.read({ keyId, from: now, to: now + 60_000, interval: 'minute' });
    expect(bucket?.requests).toMatchObject({ allowed: 1, rate_limited: 1 });
    expect(bucket?.credits).toBe(2);
  });
});

describe('createPostgresUsageStore on PGlite', () => {
  let db: PGlite;
  let store: UsageStore;
  beforeAll(async () => {
    db = await createPglite();
    await migrate(db);
    store = createPostgresUsageStore({ client: db });
  }, 60_000);
  afterAll(async () => {
    if (db !== undefined && !db.closed) await db.close();
  });

  describeUsageStore('PGlite', () => ({ store, freshId }), { runs: 4 });

  it('refuses a client without query() and a bad retention with ConfigError', () => {
    expect(() => createPostgresUsageStore({ client: {} as never })).toThrow(ConfigError);
    expect(() => createPostgresUsageStore({ client: db, retention: { day: -1 } })).toThrow(ConfigError);
  });
});
