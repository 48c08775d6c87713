import { PGlite } from '@electric-sql/pglite';
import { ConfigError, isKeysetError } from '@keyset/core';
import { describeQuotaStore, postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresQuotaStore, type PostgresQuotaStore } from './postgres-quota-store.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_quota');
let n = 0;
const freshKey = (): string => `key_${process.pid}_${n++}`;

describe.skipIf(url === undefined)('createPostgresQuotaStore (real PostgreSQL, pooled connections)', () => {
  let pool: pg.Pool;
  let store: PostgresQuotaStore;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: url, max: 6 });
    await migrate(pool, { schema });
    store = createPostgresQuotaStore({ client: pool, schema });
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  // One store over a pool of 6: concurrent spends run on different connections at once.
  describeQuotaStore('PostgreSQL (pg Pool of 6)', () => ({ stores: [store], freshKey }));

  it('each spend is one statement', async () => {
    const texts: string[] = [];
    const counting = createPostgresQuotaStore({
      client: { query: (text: string, params?: unknown[]) => (texts.push(text), pool.query(text, params)) },
      schema,
    });
    await counting.spend({ key: freshKey(), generation: 1, initial: 3, period: 0, refillAmount: 3, cost: 1 });
    expect(texts).toHaveLength(1);
  });

  it('a database that fails → KeysetError unavailable', async () => {
    const broken = createPostgresQuotaStore({ client: { query: () => Promise.reject(new Error('connection refused')) } });
    const error = await broken.spend({ key: freshKey(), generation: 1, initial: 3, period: 0, refillAmount: null, cost: 1 }).catch((e: unknown) => e);
    expect(isKeysetError(error) && error.code).toBe('unavailable');
  });
});

describe('createPostgresQuotaStore on PGlite', () => {
  let db: PGlite;
  let store: PostgresQuotaStore;
  beforeAll(async () => {
    db = await PGlite.create();
    await migrate(db);
    store = createPostgresQuotaStore({ client: db });
  }, 60_000);
  afterAll(async () => {
    if (db !== undefined && !db.closed) await db.close();
  });

  describeQuotaStore('PGlite', () => ({ stores: [store], freshKey }), { runs: 5 });

  it('refuses a client without query() with ConfigError', () => {
    expect(() => createPostgresQuotaStore({ client: {} as never })).toThrow(ConfigError);
  });
});
