/**
 * `UsageStore` on PostgreSQL: the table `migrate()` creates (version 12), one row per bucket
 * size, key and bucket. A flush is ONE statement whatever its size: the deltas travel as
 * arrays (`unnest`), each is added to its minute, hour and day row in the same statement
 * (`INSERT … ON CONFLICT DO UPDATE SET n = n + EXCLUDED.n`), so counts from any number of
 * instances add up exactly and an hour always equals the sum of its minutes. Rows are
 * written in key order, so concurrent flushes lock them in one order (no deadlock).
 * @module
 */
import { ConfigError, KeysetError, type UsageBucket, type UsageDelta, type UsageInterval, type UsageQuery, type UsageRetention, type UsageStore, type UsageTopItem, type UsageTopQuery } from '@keyset/core';
import {
  assertKnownOptions,
  checkUsageDeltas,
  checkUsageQuery,
  checkUsageTopQuery,
  denseUsageBuckets,
  emptyUsageRequests,
  type KnownOptions,
  USAGE_OUTCOMES,
  usageCutoffs,
  usageRetention,
} from '@keyset/core/adapter';
import { tableNames } from './internal/identifiers.ts';
import { runQuery } from './internal/run-query.ts';
import type { TableOptions } from './migrate.ts';
import type { Queryable } from './queryable.ts';

/** Options of `createPostgresUsageStore`: the same client and table options as the key store. */
export interface PostgresUsageStoreOptions extends TableOptions {
  /** Any `{ query(text, params) }` client: node-postgres `Pool` or `Client`, PGlite. Never ended by the store. */
  client: Queryable;
  /** How long buckets of each size are kept by `prune`, in days. @default { minute: 2, hour: 90, day: 730 } */
  retention?: UsageRetention;
}

const USAGE_STORE_OPTIONS = {
  client: true,
  schema: true,
  tablePrefix: true,
  retention: { minute: true, hour: true, day: true },
} as const satisfies KnownOptions<PostgresUsageStoreOptions>;

/** The `span` column of each bucket size. */
const SPAN: Readonly<Record<UsageInterval, number>> = { minute: 1, hour: 2, day: 3 };

const COLUMNS = USAGE_OUTCOMES.join(', ');
const TOTAL = USAGE_OUTCOMES.join(' + ');
const REFUSED = USAGE_OUTCOMES.filter((o) => o !== 'allowed').join(' + ');

/**
 * A usage store over the table `migrate()` creates (version 12). A failing database
 * rejects with `KeysetError('unavailable')` (the counter keeps its deltas and retries).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * const usage = createUsageCounter({ store: createPostgresUsageStore({ client: pool }) });
 * const limiter = createRateLimiter({ defaultPolicy: { limit: 100, windowSeconds: 60 }, onDecision: usage.record });
 * ```
 */
export function createPostgresUsageStore(options: PostgresUsageStoreOptions): UsageStore {
  assertKnownOptions('createPostgresUsageStore', options, USAGE_STORE_OPTIONS);
  const { client, schema = 'public', tablePrefix = 'keyset_' } = options;
  if (typeof client?.query !== 'function') {
    throw new ConfigError('client must have a query(text, params) method, e.g. a node-postgres Pool or a PGlite instance');
  }
  const retention = usageRetention(options.retention);
  const t = tableNames(schema, tablePrefix);
  // Bucket starts are computed here in UTC from epoch ms (integer division), never with
  // date_trunc, whose days follow the session's TimeZone. Counts travel as text arrays
  // cast to int8: exact whatever the driver does with numbers.
  const addSql = `WITH input AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], $8::int8[], $9::int8[], $10::int8[])
        AS i(key_id, owner_id, minute, ${COLUMNS}, credits)
    ), spans AS (
      SELECT s.span, i.key_id, to_timestamp((i.minute / s.size) * s.size / 1000) AS bucket, max(i.owner_id) AS owner_id,
        ${USAGE_OUTCOMES.map((o) => `sum(i.${o})::int8 AS ${o}`).join(', ')}, sum(i.credits)::int8 AS credits
      FROM input i CROSS JOIN (VALUES (1::int2, 60000::int8), (2::int2, 3600000::int8), (3::int2, 86400000::int8)) AS s(span, size)
      GROUP BY s.span, i.key_id, 3
    )
    INSERT INTO ${t.usage} AS u (span, key_id, bucket, owner_id, ${COLUMNS}, credits)
      SELECT span, key_id, bucket, owner_id, ${COLUMNS}, credits FROM spans ORDER BY span, key_id, bucket
    ON CONFLICT (span, key_id, bucket) DO UPDATE SET owner_id = coalesce(EXCLUDED.owner_id, u.owner_id),
      ${USAGE_OUTCOMES.map((o) => `${o} = u.${o} + EXCLUDED.${o}`).join(', ')}, credits = u.credits + EXCLUDED.credits`;
  const sums = `${USAGE_OUTCOMES.map((o) => `sum(${o})::text AS ${o}`).join(', ')}, sum(credits)::text AS credits`;
  const range = `span = $1 AND bucket >= to_timestamp($3::float8 / 1000) AND bucket < to_timestamp($4::float8 / 1000)`;
  const startOf = `(extract(epoch FROM bucket) * 1000)::int8::text AS start`;
  const readKeySql = `SELECT ${startOf}, ${sums} FROM ${t.usage} WHERE key_id = $2 AND ${range} GROUP BY bucket`;
  const readOwnerSql = `SELECT ${startOf}, ${sums} FROM ${t.usage} WHERE owner_id = $2 AND ${range} GROUP BY bucket`;
  const topSql = (by: 'requests' | 'refusals'): string => `SELECT key_id, sum(${TOTAL})::text AS requests, sum(${REFUSED})::text AS refusals, sum(credits)::text AS credits
    FROM ${t.usage} WHERE span = $1 AND bucket >= to_timestamp($2::float8 / 1000) AND bucket < to_timestamp($3::float8 / 1000)
    GROUP BY key_id HAVING sum(${by === 'requests' ? TOTAL : REFUSED}) > 0
    ORDER BY sum(${by === 'requests' ? TOTAL : REFUSED}) DESC, key_id COLLATE "C" LIMIT $4`;
  const pruneSql = `WITH gone AS (
      DELETE FROM ${t.usage} WHERE (span = 1 AND bucket < to_timestamp($1::float8 / 1000))
        OR (span = 2 AND bucket < to_timestamp($2::float8 / 1000)) OR (span = 3 AND bucket < to_timestamp($3::float8 / 1000))
      RETURNING 1
    ) SELECT count(*)::text AS n FROM gone`;

  return Object.freeze({
    async add(deltas: readonly UsageDelta[]): Promise<void> {
      checkUsageDeltas(deltas);
      if (deltas.length === 0) return;
      await runQuery(client, addSql, [
        deltas.map((d) => d.keyId),
        deltas.map((d) => d.ownerId),
        deltas.map((d) => String(d.minute)),
        ...USAGE_OUTCOMES.map((_, i) => deltas.map((d) => String(d.requests[i]))),
        deltas.map((d) => String(d.credits)),
      ]);
    },

    async read(query: UsageQuery): Promise<UsageBucket[]> {
      const from = checkUsageQuery(query);
      const { to, interval } = query;
      const rows = await runQuery(client, query.keyId === undefined ? readOwnerSql : readKeySql, [SPAN[interval], query.keyId ?? query.ownerId, from, to]);
      const found = new Map<number, UsageBucket>();
      for (const row of rows) {
        const start = Number(row.start);
        const requests = emptyUsageRequests();
        for (const outcome of USAGE_OUTCOMES) requests[outcome] = count(row[outcome]);
        found.set(start, { start, requests, credits: count(row.credits) });
      }
      return denseUsageBuckets(found, from, to, interval);
    },

    async top(query: UsageTopQuery): Promise<UsageTopItem[]> {
      const { interval, from } = checkUsageTopQuery(query);
      const rows = await runQuery(client, topSql(query.by), [SPAN[interval], from, query.to, query.limit]);
      return rows.map((row) => ({ keyId: String(row.key_id), requests: count(row.requests), refusals: count(row.refusals), credits: count(row.credits) }));
    },

    async prune(now: number): Promise<number> {
      if (!Number.isSafeInteger(now) || now < 0) throw new ConfigError(`prune(now) takes epoch milliseconds, got ${String(now)}`);
      const cutoffs = usageCutoffs(now, retention);
      const [row] = await runQuery(client, pruneSql, [cutoffs.minute, cutoffs.hour, cutoffs.day]);
      return count(row?.n);
    },
  });
}

function count(value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new KeysetError('unavailable', { detail: 'The usage store is unavailable.', cause: new Error('unexpected count from the usage table') });
  }
  return n;
}
