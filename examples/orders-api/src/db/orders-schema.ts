/**
 * The orders table, its indexes and the first-start seed. Statements are idempotent and
 * run under the startup lock (`Database.exclusive`), one statement per `query` call so
 * they work the same on PGlite and node-postgres.
 * @module
 */
import type { SqlClient } from './database.ts';

const MIGRATION: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS orders (
    id           bigint      PRIMARY KEY,
    created_at   timestamptz NOT NULL,
    customer     text        NOT NULL,
    amount_cents bigint      NOT NULL CHECK (amount_cents >= 0),
    currency     char(3)     NOT NULL,
    status       text        NOT NULL
  )`,
  // The pagination sort (created_at DESC, id DESC) and the daily report's range scan.
  'CREATE INDEX IF NOT EXISTS orders_created_at_id_idx ON orders (created_at DESC, id DESC)',
  // ?sort=amountCents / -amountCents (the id tie-breaker follows its direction: one index, read either way).
  'CREATE INDEX IF NOT EXISTS orders_amount_cents_id_idx ON orders (amount_cents, id)',
  // Filtered walks (?status=, ?customer=): the filter column first, then the sort, so one
  // status or one customer under -createdAt or amountCents is a single index range read
  // either way (backward pages too). Several statuses (= ANY) and ?sort=id under a filter
  // use the sort's own index with the filter applied to it.
  'CREATE INDEX IF NOT EXISTS orders_status_created_at_id_idx ON orders (status, created_at DESC, id DESC)',
  'CREATE INDEX IF NOT EXISTS orders_status_amount_cents_id_idx ON orders (status, amount_cents, id)',
  'CREATE INDEX IF NOT EXISTS orders_customer_created_at_id_idx ON orders (customer, created_at DESC, id DESC)',
  'CREATE INDEX IF NOT EXISTS orders_customer_amount_cents_id_idx ON orders (customer, amount_cents, id)',
  'CREATE INDEX IF NOT EXISTS orders_customer_id_idx ON orders (customer, id)',
  'CREATE TABLE IF NOT EXISTS orders_api_meta (name text PRIMARY KEY, value text NOT NULL)',
];

/**
 * Creates the example's tables and indexes if they do not exist. A table that was never
 * analysed (a data directory seeded before statistics were gathered: PGlite has no
 * autovacuum) is analysed once, so the planner's estimates (`total: 'estimated'`) start
 * from real statistics.
 */
export async function migrateOrders(client: SqlClient): Promise<void> {
  for (const statement of MIGRATION) await client.query(statement);
  const { rows } = await client.query<{ reltuples: number | string }>("SELECT reltuples FROM pg_class WHERE oid = 'orders'::regclass");
  if (Number(rows[0]?.reltuples ?? 0) < 0) await client.query('ANALYZE orders');
}

/**
 * One statement, all in SQL: `n` orders over the 90 days before now. Deterministic
 * apart from the anchor (now, to the second): a multiplicative hash of the id picks
 * the timestamp bucket, so ids are unrelated to time and about three orders share
 * each exact timestamp (1 to ~10 per bucket), which exercises the id tie-break.
 * Offsets carry microseconds, which a JS `Date` would lose. `$2..$3` is the id range of
 * one batch; the buckets depend on the total `$1` only, so batching changes nothing.
 */
const SEED_SQL = `
WITH p AS (
  SELECT $1::bigint AS n,
         greatest($1::bigint / 3, 1) AS buckets,
         7776000000000::bigint / greatest($1::bigint / 3, 1) AS step_us,
         date_trunc('second', now()) AS anchor
), g AS (
  SELECT s AS id, (s * 2654435761) % 4294967296 AS h
  FROM generate_series($2::bigint, $3::bigint) AS s
), b AS (
  SELECT g.id, g.h, g.h % p.buckets AS bucket, p.step_us, p.anchor FROM g, p
)
INSERT INTO orders (id, created_at, customer, amount_cents, currency, status)
SELECT id,
       anchor - interval '1 microsecond' * (bucket * step_us + ((bucket * 2246822519) % 4294967296) % step_us),
       'cust_' || lpad(((h / 7) % 500 + 1)::text, 4, '0'),
       199 + (h / 13) % 49801,
       CASE WHEN (h / 31) % 10 < 6 THEN 'USD' WHEN (h / 31) % 10 < 9 THEN 'EUR' ELSE 'GBP' END,
       CASE WHEN (h / 101) % 20 < 15 THEN 'paid' WHEN (h / 101) % 20 < 17 THEN 'pending'
            WHEN (h / 101) % 20 < 19 THEN 'refunded' ELSE 'cancelled' END
FROM b`;

/** Orders inserted per statement, so a first start can report progress. */
export const SEED_BATCH = 2_500;

/**
 * Seeds `count` orders on the first start only (recorded in `orders_api_meta`, so
 * deleting orders later never re-seeds). One transaction: a crash seeds nothing.
 * `onProgress(inserted, count)` runs after each batch of `SEED_BATCH` orders.
 * Resolves the number of orders inserted (0 when already seeded).
 */
export async function seedOrders(
  client: SqlClient,
  count: number,
  onProgress: (inserted: number, total: number) => void = () => undefined,
): Promise<number> {
  const done = await client.query("SELECT value FROM orders_api_meta WHERE name = 'seeded_at'");
  if (done.rows.length > 0) return 0;
  await client.query('BEGIN');
  try {
    for (let first = 1; first <= count; first += SEED_BATCH) {
      const last = Math.min(first + SEED_BATCH - 1, count);
      await client.query(SEED_SQL, [count, first, last]);
      onProgress(last, count);
    }
    await client.query("INSERT INTO orders_api_meta (name, value) VALUES ('seeded_at', now()::text)");
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  // Fresh statistics for the planner (index choice, estimated totals) right after the bulk load.
  await client.query('ANALYZE orders');
  return count;
}
