import type { PGlite } from '@electric-sql/pglite';
import { ConfigError, isKeysetError } from '@keyset/core';
import { laterQuotaState, type QuotaState } from '@keyset/core/adapter';
import fc from 'fast-check';
import { describeQuotaStore, postgresUrl, uniqueSchema, createPglite } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The durable side (`load`/`save`, behind `createRedisQuotaStore({ durable })`): any
 * sequence of batches, written concurrently, leaves each row at the latest state written
 * (never moved back), and each `save` answers the later of the row before and the entry.
 */
function describeDurable(label: string, store: () => PostgresQuotaStore, runs: number): void {
  describe(`durable quota store: ${label}`, () => {
    const stateArb = fc.record({ generation: fc.integer({ min: 1, max: 3 }), period: fc.integer({ min: 0, max: 3 }), remaining: fc.integer({ min: 0, max: 9 }) });
    it('rows only move forward, whatever order concurrent batches arrive in', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), stateArb), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }), async (batches) => {
          const base = freshKey();
          const expected = new Map<string, QuotaState | undefined>();
          const answers = await Promise.all(
            batches.map((batch) => {
              // Distinct keys per batch, as the Redis store sends them.
              const entries = [...new Map(batch.map(([k, state]) => [`${base}_${k}`, state])).entries()].map(([key, state]) => ({ key, state }));
              for (const { key, state } of entries) expected.set(key, laterQuotaState(expected.get(key), state));
              return store().save(entries).then((saved) => ({ entries, saved }));
            }),
          );
          for (const { entries, saved } of answers) {
            entries.forEach((entry, i) => expect(laterQuotaState(saved[i], entry.state)).toEqual(saved[i]));
          }
          for (const [key, state] of expected) expect(await store().load(key)).toEqual(state);
        }),
        { numRuns: runs },
      );
    });

    it('load of a key never written is undefined; save refuses duplicate keys and bad states', async () => {
      expect(await store().load(freshKey())).toBeUndefined();
      const key = freshKey();
      const state = { generation: 1, period: 0, remaining: 1 };
      await expect(store().save([{ key, state }, { key, state }])).rejects.toThrow(ConfigError);
      await expect(store().save([{ key, state: { ...state, remaining: -1 } }])).rejects.toThrow(ConfigError);
      expect(await store().save([])).toEqual([]);
    });

    it('a spend after a save continues from the saved state (one table for both)', async () => {
      const key = freshKey();
      await store().save([{ key, state: { generation: 5, period: 0, remaining: 3 } }]);
      expect(await store().spend({ key, generation: 5, initial: 50, period: 0, refillAmount: null, cost: 1 })).toEqual({ allowed: true, remaining: 2 });
    });
  });
}
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
  describeDurable('PostgreSQL (pg Pool of 6)', () => store, 40);

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
    db = await createPglite();
    await migrate(db);
    store = createPostgresQuotaStore({ client: db });
  }, 60_000);
  afterAll(async () => {
    if (db !== undefined && !db.closed) await db.close();
  });

  describeQuotaStore('PGlite', () => ({ stores: [store], freshKey }), { runs: 5 });
  describeDurable('PGlite', () => store, 10);

  it('refuses a client without query() with ConfigError', () => {
    expect(() => createPostgresQuotaStore({ client: {} as never })).toThrow(ConfigError);
  });
});
