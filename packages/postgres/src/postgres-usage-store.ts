/**
 * `UsageStore` on PostgreSQL: the tables `migrate()` creates (versions 12 and 13), one row
 * per bucket size, key and bucket. An `add` is ONE statement whatever its size: the deltas
 * travel as arrays (`unnest`), each is added to its minute, hour and day row in the same
 * statement (`INSERT … ON CONFLICT DO UPDATE SET n = n + EXCLUDED.n`), so counts from any
 * number of instances add up exactly and an hour always equals the sum of its minutes.
 * With a flush token, the same statement first raises the instance's flush sequence and
 * adds the counts only if it did: a retried flush that already committed adds nothing
 * (a statement still running from the first try holds that row's lock, so the retry waits
 * for it, then finds the sequence reached). Rows are written in key order, so concurrent
 * flushes lock them in one order (no deadlock).
 * @module
 */
import { ConfigError, KeysetError, type UsageBucket, type UsageDelta, type UsageFlushToken, type UsageInterval, type UsageQuery, type UsageRetention, type UsageStore, type UsageTopItem, type UsageTopQuery } from '@keyset/core';
import {
  assertKnownOptions,
  checkUsageDeltas,
  checkUsageFlushToken,
  checkUsageQuery,
  checkUsageTopQuery,
  denseUsageBuckets,
  emptyUsageRequests,
  type KnownOptions,
  SERVED_OUTCOMES,
  USAGE_OUTCOMES,
  usageCutoffs,
  usageRetention,
  usageTopSegments,
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

/** How long an instance's last flush sequence is kept after its last flush: a week. */
const FLUSH_RECORD_MS = 7 * 86_400_000;

const COLUMNS = USAGE_OUTCOMES.join(', ');
/** The flush token's parameters come after key ids, owner ids, minutes, one array per outcome and credits. */
const TOKEN_PARAM = USAGE_OUTCOMES.length + 5;
const TOTAL = USAGE_OUTCOMES.join(' + ');
// Served requests (`allowed`, and the would-be refusals of observed limits) are not refusals.
const REFUSED = USAGE_OUTCOMES.filter((o) => !SERVED_OUTCOMES.includes(o)).join(' + ');

/**
 * A usage store over the tables `migrate()` creates (versions 12, 14 and 16). A failing database
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
  const addSql = (token: boolean): string => `WITH ${
    token
      ? `flush AS (
      INSERT INTO ${t.usageFlushes} AS f (instance, sequence, at) VALUES ($${TOKEN_PARAM}, $${TOKEN_PARAM + 1}::int8, now())
      ON CONFLICT (instance) DO UPDATE SET sequence = EXCLUDED.sequence, at = EXCLUDED.at WHERE f.sequence < EXCLUDED.sequence
      RETURNING 1
    ), `
      : ''
  }input AS (
      SELECT * FROM unnest($1::text[], $2::text[], ${Array.from({ length: USAGE_OUTCOMES.length + 2 }, (_, i) => `$${i + 3}::int8[]`).join(', ')})
        AS i(key_id, owner_id, minute, ${COLUMNS}, credits)${token ? ' WHERE EXISTS (SELECT 1 FROM flush)' : ''}
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
  const addPlainSql = addSql(false);
  const addOnceSql = addSql(true);
  const sums = `${USAGE_OUTCOMES.map((o) => `sum(${o})::text AS ${o}`).join(', ')}, sum(credits)::text AS credits`;
  const range = `span = $1 AND bucket >= to_timestamp($3::float8 / 1000) AND bucket < to_timestamp($4::float8 / 1000)`;
  const startOf = `(extract(epoch FROM bucket) * 1000)::int8::text AS start`;
  const readKeySql = `SELECT ${startOf}, ${sums} FROM ${t.usage} WHERE key_id = $2 AND ${range} GROUP BY bucket`;
  const readOwnerSql = `SELECT ${startOf}, ${sums} FROM ${t.usage} WHERE owner_id = $2 AND ${range} GROUP BY bucket`;
  // The range in its coarsest rows (day rows for whole days, hours for whole hours, minutes
  // only at the ragged ends): a day's ranking at minute interval reads a row per key, not
  // 1,440. Each segment is one bucket size and one range, which the span-and-bucket index
  // of the hour and day rows (or the BRIN index, for minutes) serves.
  const topSql = (by: 'requests' | 'refusals', segments: number): string => {
    const ranges = Array.from({ length: segments }, (_, i) => `(span = $${3 * i + 2} AND bucket >= to_timestamp($${3 * i + 3}::float8 / 1000) AND bucket < to_timestamp($${3 * i + 4}::float8 / 1000))`);
    return `SELECT key_id, sum(${TOTAL})::text AS requests, sum(${REFUSED})::text AS refusals, sum(credits)::text AS credits
    FROM ${t.usage} WHERE ${ranges.join(' OR ')}
    GROUP BY key_id HAVING sum(${by === 'requests' ? TOTAL : REFUSED}) > 0
    ORDER BY sum(${by === 'requests' ? TOTAL : REFUSED}) DESC, key_id COLLATE "C" LIMIT $1`;
  };
  // An instance's flush row goes a week after its last flush: a counter retries a batch
  // only while it runs, and one that could not reach the database for a week has more to
  // worry about. Its deletion is not counted in what prune() answers (rows of counts).
  const pruneSql = `WITH flushes AS (
      DELETE FROM ${t.usageFlushes} WHERE at < to_timestamp($4::float8 / 1000)
    ), gone AS (
      DELETE FROM ${t.usage} WHERE (span = 1 AND bucket < to_timestamp($1::float8 / 1000))
        OR (span = 2 AND bucket < to_timestamp($2::float8 / 1000)) OR (span = 3 AND bucket < to_timestamp($3::float8 / 1000))
      RETURNING 1
    ) SELECT count(*)::text AS n FROM gone`;

  return Object.freeze({
    async add(deltas: readonly UsageDelta[], token?: UsageFlushToken): Promise<void> {
      checkUsageDeltas(deltas);
      checkUsageFlushToken(token);
      if (deltas.length === 0) return;
      await runQuery(client, token === undefined ? addPlainSql : addOnceSql, [
        deltas.map((d) => d.keyId),
        deltas.map((d) => d.ownerId),
        deltas.map((d) => String(d.minute)),
        ...USAGE_OUTCOMES.map((_, i) => deltas.map((d) => String(d.requests[i]))),
        deltas.map((d) => String(d.credits)),
        ...(token === undefined ? [] : [token.instance, String(token.sequence)]),
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
      const segments = usageTopSegments(from, query.to, interval);
      if (segments.length === 0) return [];
      const rows = await runQuery(client, topSql(query.by, segments.length), [query.limit, ...segments.flatMap((s) => [SPAN[s.interval], s.from, s.to])]);
      return rows.map((row) => ({ keyId: String(row.key_id), requests: count(row.requests), refusals: count(row.refusals), credits: count(row.credits) }));
    },

    async prune(now: number): Promise<number> {
      if (!Number.isSafeInteger(now) || now < 0) throw new ConfigError(`prune(now) takes epoch milliseconds, got ${String(now)}`);
      const cutoffs = usageCutoffs(now, retention);
      const [row] = await runQuery(client, pruneSql, [cutoffs.minute, cutoffs.hour, cutoffs.day, now - FLUSH_RECORD_MS]);
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
