/**
 * `QuotaStore` on PostgreSQL: each spend is ONE statement, `SELECT * FROM
 * <prefix>spend_quota(…)` (migration 4), which refills, compares and decrements under the
 * quota row's lock. Concurrent spends from any number of instances serialise on that row,
 * so they never spend more than there is, and a pooled client needs no transaction.
 * @module
 */
import { ConfigError, KeysetError } from '@keyset/core';
import { checkQuotaSpend } from '@keyset/core/adapter';
import type { QuotaStore } from '@keyset/core';
import type { QuotaSpend, QuotaStoreResult } from '@keyset/core/adapter';
import { tableNames } from './internal/identifiers.ts';
import { runQuery } from './internal/run-query.ts';
import type { TableOptions } from './migrate.ts';
import type { Queryable } from './queryable.ts';

/** Options of `createPostgresQuotaStore`: the same client and table options as the key store. */
export interface PostgresQuotaStoreOptions extends TableOptions {
  /** Any `{ query(text, params) }` client: node-postgres `Pool` or `Client`, PGlite. Never ended by the store. */
  client: Queryable;
}

/** The PostgreSQL quota store; `spend` always answers asynchronously. */
export interface PostgresQuotaStore extends QuotaStore {
  spend(request: QuotaSpend): Promise<QuotaStoreResult>;
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
  const { client, schema = 'public', tablePrefix = 'keyset_' } = options;
  if (typeof client?.query !== 'function') {
    throw new ConfigError('client must have a query(text, params) method, e.g. a node-postgres Pool or a PGlite instance');
  }
  const t = tableNames(schema, tablePrefix);
  // bigint parameters travel as text: exact whatever the driver does with numbers.
  const spendSql = `SELECT allowed, remaining::text AS remaining FROM ${t.spendQuotaFunction}($1, $2::int8, $3::int8, $4::int8, $5::int8, $6::int8)`;

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
  });
}
