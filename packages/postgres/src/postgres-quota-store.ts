/**
 * `QuotaStore` on PostgreSQL: each spend is ONE statement, `SELECT * FROM
 * <prefix>spend_quota(…)` (migration 4), which refills, compares and decrements under the
 * quota row's lock; a key's quota and its owner's, `spendAll`, are one statement too,
 * `<prefix>spend_quotas(…)` (migration 10), all-or-nothing under both rows' locks. Concurrent spends from any number of instances serialise on that row,
 * so they never spend more than there is, and a pooled client needs no transaction.
 *
 * The same table is the durable store behind `createRedisQuotaStore({ durable })`: `load`
 * reads a key's state, `save` merges states into it (one statement per batch), each row
 * becoming the later of itself and what is written (core's `isLaterQuotaState` order:
 * generation, then period, then fewer credits left), so flushes from any number of
 * instances, in any order, never hand credits back.
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { assertKnownOptions, checkQuotaSpend, checkQuotaSpends, type KnownOptions, laterQuotaState } from '@keyset/core/adapter';
import type { QuotaStore } from '@keyset/core';
import type { DurableQuotaEntry, DurableQuotaStore, QuotaSpend, QuotaState, QuotaStoreResult } from '@keyset/core/adapter';
import { tableNames } from './internal/identifiers.ts';
import { runQuery } from './internal/run-query.ts';
import type { TableOptions } from './migrate.ts';
import type { Queryable } from './queryable.ts';

/** Options of `createPostgresQuotaStore`: the same client and table options as the key store. */
export interface PostgresQuotaStoreOptions extends TableOptions {
  /** Any `{ query(text, params) }` client: node-postgres `Pool` or `Client`, PGlite. Never ended by the store. */
  client: Queryable;
}

/** Every name `PostgresQuotaStoreOptions` knows, checked when the store is made. */
const QUOTA_STORE_OPTIONS = { client: true, schema: true, tablePrefix: true } as const satisfies KnownOptions<PostgresQuotaStoreOptions>;

/** The PostgreSQL quota store; `spend` always answers asynchronously. Also a durable store for Redis. */
export interface PostgresQuotaStore extends QuotaStore, DurableQuotaStore {
  spend(request: QuotaSpend): Promise<QuotaStoreResult>;
  /** Several quotas (a key's and its owner's) in ONE statement, all-or-nothing (see `QuotaStore.spendAll`; migration 10). */
  spendAll(requests: readonly QuotaSpend[]): Promise<QuotaStoreResult[]>;
}

/**
 * A quota store over the table and function that `migrate()` creates (version 4).
 * A failing database rejects with `KeysetError('unavailable')`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, quotaStore: createPostgresQuotaStore({ client: pool }) });
 * ```
 */
export function createPostgresQuotaStore(options: PostgresQuotaStoreOptions): PostgresQuotaStore {
  assertKnownOptions('createPostgresQuotaStore', options, QUOTA_STORE_OPTIONS);
  const { client, schema = 'public', tablePrefix = 'keyset_' } = options;
  if (typeof client?.query !== 'function') {
    throw new ConfigError('client must have a query(text, params) method, e.g. a node-postgres Pool or a PGlite instance');
  }
  const t = tableNames(schema, tablePrefix);
  // bigint parameters travel as text: exact whatever the driver does with numbers.
  const spendSql = `SELECT allowed, remaining::text AS remaining FROM ${t.spendQuotaFunction}($1, $2::int8, $3::int8, $4::int8, $5::int8, $6::int8)`;
  const spendAllSql = `SELECT s.allowed, s.remaining::text AS remaining
    FROM ${t.spendQuotasFunction}($1::text[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::int8[]) WITH ORDINALITY AS s(allowed, remaining, ord) ORDER BY s.ord`;
  const loadSql = `SELECT generation::text AS generation, period::text AS period, remaining::text AS remaining FROM ${t.quotas} WHERE key = $1`;
  // One statement per batch: the row takes the written state only when that is later, and
  // the rows as they were before (the statement's snapshot) come back, so the caller can
  // tell where the durable state is further along than what it wrote. Rows are written in
  // key order, so concurrent saves from several instances lock them in one order (no
  // deadlock); the data-modifying CTE runs to completion whether or not it is read.
  const saveSql = `WITH input AS (
      SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[]) WITH ORDINALITY AS i(key, generation, period, remaining, ord)
    ), written AS (
      INSERT INTO ${t.quotas} AS q (key, generation, period, remaining)
        SELECT key, generation, period, remaining FROM input ORDER BY key
      ON CONFLICT (key) DO UPDATE SET generation = EXCLUDED.generation, period = EXCLUDED.period, remaining = EXCLUDED.remaining, updated_at = now()
        WHERE (q.generation, q.period, -q.remaining) < (EXCLUDED.generation, EXCLUDED.period, -EXCLUDED.remaining)
    )
    SELECT i.ord, b.generation::text AS generation, b.period::text AS period, b.remaining::text AS remaining
      FROM input i LEFT JOIN ${t.quotas} b ON b.key = i.key ORDER BY i.ord`;

  return Object.freeze({
    async spend(request: QuotaSpend): Promise<QuotaStoreResult> {
      checkQuotaSpend(request);
      const { key, generation, initial, period, refillAmount, cost } = request;
      const [row] = await runQuery(client, spendSql, [
        key,
        String(generation),
        String(initial),
        String(period),
        refillAmount === null ? null : String(refillAmount),
        String(cost),
      ]);
      const remaining = Number(row?.remaining);
      if (row === undefined || !Number.isSafeInteger(remaining)) {
        throw new KeysetError('unavailable', { detail: 'The quota store is unavailable.', cause: new Error('unexpected reply from spend_quota') });
      }
      return { allowed: row.allowed === true || row.allowed === 't', remaining };
    },

    async spendAll(requests: readonly QuotaSpend[]): Promise<QuotaStoreResult[]> {
      checkQuotaSpends(requests);
      const rows = await runQuery(client, spendAllSql, [
        requests.map((r) => r.key),
        requests.map((r) => String(r.generation)),
        requests.map((r) => String(r.initial)),
        requests.map((r) => String(r.period)),
        requests.map((r) => (r.refillAmount === null ? null : String(r.refillAmount))),
        requests.map((r) => String(r.cost)),
      ]);
      if (rows.length !== requests.length) throw unexpected('spend');
      return rows.map((row) => {
        const remaining = Number(row.remaining);
        if (!Number.isSafeInteger(remaining)) throw unexpected('spend');
        return { allowed: row.allowed === true || row.allowed === 't', remaining };
      });
    },

    async load(key: string): Promise<QuotaState | undefined> {
      if (typeof key !== 'string' || key.length === 0) throw new ConfigError('A quota key must be a non-empty string');
      const [row] = await runQuery(client, loadSql, [key]);
      return row === undefined ? undefined : stateOf(row);
    },

    async save(entries: readonly DurableQuotaEntry[]): Promise<QuotaState[]> {
      if (entries.length === 0) return [];
      const seen = new Set<string>();
      for (const { key, state } of entries) {
        if (typeof key !== 'string' || key.length === 0 || seen.has(key)) throw new ConfigError('save() needs distinct, non-empty quota keys');
        seen.add(key);
        checkQuotaSpend({ key, generation: state.generation, initial: state.remaining, period: state.period, refillAmount: null, cost: 0 });
      }
      const rows = await runQuery(client, saveSql, [
        entries.map((e) => e.key),
        entries.map((e) => String(e.state.generation)),
        entries.map((e) => String(e.state.period)),
        entries.map((e) => String(e.state.remaining)),
      ]);
      if (rows.length !== entries.length) throw unexpected('save');
      // The durable state now: the later of the row before and what was written.
      return entries.map((entry, i) => laterQuotaState(rows[i].generation === null ? undefined : stateOf(rows[i]), entry.state) as QuotaState);
    },
  });
}

function stateOf(row: { generation: unknown; period: unknown; remaining: unknown }): QuotaState {
  const state = { generation: Number(row.generation), period: Number(row.period), remaining: Number(row.remaining) };
  if (!Number.isSafeInteger(state.generation) || !Number.isSafeInteger(state.period) || !Number.isSafeInteger(state.remaining)) throw unexpected('load');
  return state;
}

function unexpected(operation: string): KeysetError {
  return new KeysetError('unavailable', { detail: 'The quota store is unavailable.', cause: new Error(`unexpected reply to the quota ${operation}`) });
}
