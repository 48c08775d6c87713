/**
 * Usage reads beside the API: the example server (Hono) on a PostgreSQL of the benchmark's
 * own, its usage table filled with BENCH_USAGE_ROWS minute rows (2.6 million: 900 keys,
 * two days of minutes, their hour and day rows beside them; the largest owner has 100 of
 * the keys), then:
 * 1. the largest reads alone, five times each, median: an owner's 1,440 minutes
 *    (`/api/owners/{id}/usage?interval=minute`) and the day's top 100 keys at minute
 *    interval (`/api/usage/top`): time and body size;
 * 2. `GET /api/orders` latency from 8 clients, alone, then while 80 clients send those
 *    largest reads for BENCH_SECONDS, all at once, then each again as soon as answered
 *    (after `Retry-After` when refused, as a client should): the API's p50 and p99, and
 *    how the reads were answered (200, 429 `usage_reads_busy`, 503). The clients run in
 *    the server's process (one event loop for both).
 * Skipped without initdb (it needs a server it can fill without touching a shared one).
 * Env: BENCH_USAGE_ROWS (2,592,000), BENCH_SECONDS (10).
 */
import { performance } from 'node:perf_hooks';
import { rmSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createOrdersApi } from '../examples/orders-api/src/create-orders-api.ts';
import { createLogger } from '../examples/orders-api/src/logger.ts';
import { ownPostgresAvailable, startOwnPostgres } from '../test/support/own-postgres.ts';
import { save, setting, TMP } from './support.ts';

const ROWS = setting('BENCH_USAGE_ROWS', 2_592_000, 2880);
const SECONDS = setting('BENCH_SECONDS', 10, 1);
const READERS = setting('BENCH_READERS', 80, 4);
const MINUTES = 2880;
const KEYS = Math.max(1, Math.round(ROWS / MINUTES));
const BIG_OWNER_KEYS = Math.min(100, KEYS);
const MINUTE = 60_000;

if (!ownPostgresAvailable()) process.exit(0);
const server = await startOwnPostgres();
const dataDir = mkdtempSync(join(TMP, 'usage-reads-'));
try {
  const api = await createOrdersApi({ port: 0, dataDir, databaseUrl: server.url, seedOrders: 10_000, usageFlushMs: 3_600_000, logger: createLogger('silent') });
  try {
    await run(api.url, api.adminKey!);
  } finally {
    await api.close();
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

async function run(url: string, adminKey: string): Promise<void> {
  const admin = { authorization: `ApiKey ${adminKey}` };
  const issued = await fetch(`${url}/api/keys`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'reader', scopes: ['orders:read'], rateLimit: { limit: 1_000_000, windowSeconds: 60 } }) });
  // The readers use a key of their own with a rate limit that never binds: what is measured is the reads' limit.
  const usageAdmin = await fetch(`${url}/api/keys`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'usage reader', scopes: ['keys:admin'], rateLimit: { limit: 1_000_000, windowSeconds: 60 } }) });
  const readerAdmin = { authorization: `ApiKey ${((await usageAdmin.json()) as { key: string }).key}` };
  const reader = ((await issued.json()) as { key: string }).key;
  await fetch(`${url}/api/owners`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'cus_big' }) });

  // The rows: minutes of the last two days for every key, then their hours and days, as flushes would have written them.
  const now = Date.now();
  const start = Math.floor(now / MINUTE) * MINUTE - (MINUTES - 1) * MINUTE;
  const db = new pg.Client({ connectionString: server.url });
  await db.connect();
  const filled = performance.now();
  await db.query(
    `INSERT INTO keyset_usage (span, key_id, bucket, owner_id, allowed, rate_limited, unavailable, credits)
     SELECT 1, 'key_' || k, to_timestamp(($1::float8 + m * 60000) / 1000), CASE WHEN k < $3 THEN 'cus_big' ELSE 'cus_' || (k % 40) END,
       1 + (k + m) % 5, (k * m) % 3, (k + m) % 11 / 10, 1 + (k + m) % 5
     FROM generate_series(0, $2 - 1) k, generate_series(0, ${MINUTES - 1}) m`,
    [start, KEYS, BIG_OWNER_KEYS],
  );
  for (const [span, size] of [[2, 3_600_000], [3, 86_400_000]] as const) {
    await db.query(
      `INSERT INTO keyset_usage (span, key_id, bucket, owner_id, allowed, rate_limited, unavailable, credits)
       SELECT ${span}, key_id, to_timestamp(floor(extract(epoch FROM bucket) * 1000 / ${size}) * ${size} / 1000), max(owner_id), sum(allowed), sum(rate_limited), sum(unavailable), sum(credits)
       FROM keyset_usage WHERE span = 1 GROUP BY key_id, 3`,
    );
  }
  await db.query('VACUUM ANALYZE keyset_usage');
  const rows = Number((await db.query('SELECT count(*) AS n FROM keyset_usage')).rows[0].n);
  const size = (await db.query(`SELECT pg_size_pretty(pg_total_relation_size('keyset_usage')) AS s`)).rows[0].s as string;
  await db.end();
  console.log(`usage table: ${rows.toLocaleString('en')} rows (${KEYS} keys, ${MINUTES} minutes), ${size}, filled in ${((performance.now() - filled) / 1000).toFixed(1)} s`);

  const range = `interval=minute&from=${new Date(Math.floor(now / MINUTE) * MINUTE - 1439 * MINUTE).toISOString()}&to=${new Date(now).toISOString()}`;
  const largest = { owner: `/api/owners/cus_big/usage?${range}`, top: `/api/usage/top?${range}&limit=100` };

  // 1. Alone.
  const alone: Record<string, { ms: number; bytes: number; status: number }> = {};
  for (const [name, path] of Object.entries(largest)) {
    const times: number[] = [];
    let bytes = 0;
    let status = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}${path}`, { headers: admin });
      const body = await res.arrayBuffer();
      times.push(performance.now() - t0);
      bytes = body.byteLength;
      status = res.status;
    }
    alone[name] = { ms: Math.round(median(times)), bytes, status };
  }
  console.table(alone);

  // 2. The API alone, then beside 80 readers.
  const ordersAlone = await ordersLatency(url, reader, SECONDS);
  const answers: Record<string, number> = {};
  let stop = false;
  const readers = Array.from({ length: READERS }, async (_, i) => {
    while (!stop) {
      const res = await fetch(`${url}${i % 2 === 0 ? largest.owner : largest.top}`, { headers: readerAdmin });
      const text = await res.text();
      const answer = res.status === 200 ? '200' : `${res.status} ${(JSON.parse(text) as { code?: string }).code ?? ''}`;
      answers[answer] = (answers[answer] ?? 0) + 1;
      const wait = Number(res.headers.get('retry-after') ?? (res.status === 200 ? 0 : 1));
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  });
  const ordersBeside = await ordersLatency(url, reader, SECONDS);
  stop = true;
  await Promise.all(readers);
  console.log(`GET /api/orders alone: p50 ${ordersAlone.p50} ms, p99 ${ordersAlone.p99} ms (${ordersAlone.count} requests, statuses ${JSON.stringify(ordersAlone.statuses)})`);
  console.log(`GET /api/orders beside ${READERS} readers: p50 ${ordersBeside.p50} ms, p99 ${ordersBeside.p99} ms (${ordersBeside.count} requests, statuses ${JSON.stringify(ordersBeside.statuses)})`);
  console.log(`the readers' answers: ${JSON.stringify(answers)}`);
  save('usage-reads', { rows, keys: KEYS, bigOwnerKeys: BIG_OWNER_KEYS, tableSize: size, alone, ordersAlone, ordersBeside, readers: READERS, seconds: SECONDS, readAnswers: answers });
}

/** `GET /api/orders?limit=20` from 8 clients for `seconds`: p50, p99 (ms) and statuses. */
async function ordersLatency(url: string, key: string, seconds: number): Promise<{ p50: number; p99: number; count: number; statuses: Record<string, number> }> {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const res = await fetch(`${url}/api/orders?limit=20`, { headers: { authorization: `ApiKey ${key}` } });
        await res.arrayBuffer();
        times.push(performance.now() - t0);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), count: times.length, statuses };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
