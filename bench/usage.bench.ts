/**
 * Usage counting: what it costs a request, what a flush writes, what the counts take on disk.
 *
 * 1. Same-process A/B: keyset's full Hono stack (auth + pagination, as
 *    `bench/inprocess-ab.bench.ts` builds it, this checkout's sources) with and without a
 *    usage counter on the limiter's `onDecision` (memory store, flushed every 5 s, the
 *    flushes inside the timed CPU). Interleaved rounds of BENCH_BATCH requests over
 *    BENCH_KEYS keys; the figure is the median over rounds of (with − without) CPU µs per request.
 * 2. A flush on PostgreSQL (TEST_DATABASE_URL; PGlite when none answers): ONE statement for
 *    BENCH_USAGE_KEYS keys that each had requests in the interval (three rows each: minute,
 *    hour, day), timed as the first flush of a minute (rows inserted) and as a later one
 *    (rows updated).
 * 3. Storage: BENCH_USAGE_REQUESTS requests over one day, 1,000 keys drawn Zipf-like (a few
 *    busy keys, a long tail), counted per key and minute as the counter does, written in
 *    flushes; the table and its indexes measured with pg_total_relation_size.
 *
 * Env: BENCH_ROUNDS (21), BENCH_BATCH (4000), BENCH_KEYS (10,000), BENCH_USAGE_KEYS
 * (10,000), BENCH_USAGE_REQUESTS (1,000,000). Smoke mode (BENCH_SMOKE=1): a few of each.
 */
import { PGlite } from '@electric-sql/pglite';
import { createMemoryUsageStore, createRateLimiter, createUsageCounter, type UsageDelta } from '@keyset/core';
import { createPostgresUsageStore, migrate, type Queryable } from '@keyset/postgres';
import type { Hono } from 'hono';
import pg from 'pg';
import { stackTimer, warmStack, type Stack } from './http/fake-node.ts';
import { FULL, keysetHono } from './http/keyset-stacks.ts';
import { KEY_COUNT } from './http/orders.ts';
import { save, setting } from './support.ts';

const ROUNDS = setting('BENCH_ROUNDS', 21, 1);
const BATCH = setting('BENCH_BATCH', 4000, 20);
const PAGES = setting('BENCH_PAGES', 250, 3);
const FLUSH_KEYS = setting('BENCH_USAGE_KEYS', 10_000, 20);
const REQUESTS = setting('BENCH_USAGE_REQUESTS', 1_000_000, 2000);
const SPREAD_KEYS = 1000;

// 1. The A/B.
async function fullStack(withUsage: boolean): Promise<{ app: Hono; keys: string[]; close: () => Promise<void> }> {
  const usage = withUsage ? createUsageCounter({ store: createMemoryUsageStore(), flushIntervalMs: 5000 }) : undefined;
  // bench inprocess's full stack, with the counter as the limiter's onDecision hook or without it.
  const { app, keys, keyring } = await keysetHono(FULL, KEY_COUNT, usage === undefined ? {} : { onDecision: usage.record });
  return { app, keys, close: async () => (await usage?.close(), await keyring.close()) };
}

const without = await fullStack(false);
const withUsage = await fullStack(true);
const stacks: Stack[] = [await warmStack('without', without.app, without.keys, PAGES), await warmStack('with usage', withUsage.app, withUsage.keys, PAGES)];
const timeStack = stackTimer(BATCH);
const times: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const s of round % 2 === 0 ? stacks : [...stacks].reverse()) (times[s.name] ??= []).push(await timeStack(s));
}
await without.close();
await withUsage.close();
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const diffs = times['with usage']!.map((t, i) => t - times.without![i]!);
const sorted = [...diffs].sort((a, b) => a - b);
const ab = {
  withoutUs: Number(median(times.without!).toFixed(2)),
  withUsageUs: Number(median(times['with usage']!).toFixed(2)),
  costUs: Number(median(diffs).toFixed(2)),
  costIqrUs: `${sorted[Math.floor(sorted.length / 4)]!.toFixed(2)}..${sorted[Math.floor((3 * sorted.length) / 4)]!.toFixed(2)}`,
};
console.log(
  `full stack: ${ab.withoutUs} CPU µs/request without the counter, ${ab.withUsageUs} with; counting costs ${ab.costUs} µs (IQR ${ab.costIqrUs}; median of ${ROUNDS} rounds of ${BATCH})`,
);

// The same A/B without the HTTP stack around it, so its spread is smaller than the figure:
// limiter.check() over the 10,000-key rotation, with and without the counter on onDecision
// (the event built, the hook contained, record() counting), interleaved rounds.
const plainLimiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 } });
const countedUsage = createUsageCounter({ store: createMemoryUsageStore(), flushIntervalMs: 5000 });
const countedLimiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 }, onDecision: countedUsage.record });
const CHECKS = setting('BENCH_CHECKS', 200_000, 100);
const checkIds = Array.from({ length: KEY_COUNT }, (_, i) => `key_${i}`);
const owner = { id: 'owner_1', rateLimits: null };
const checkTimes: Record<'plain' | 'counted', number[]> = { plain: [], counted: [] };
const timeChecks = async (limiter: typeof plainLimiter): Promise<number> => {
  const start = process.cpuUsage().user;
  for (let i = 0; i < CHECKS; i++) await limiter.check(checkIds[(i * 7919) % KEY_COUNT]!, undefined, { owner });
  return ((process.cpuUsage().user - start) * 1000) / CHECKS;
};
await timeChecks(plainLimiter);
await timeChecks(countedLimiter);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (['plain', 'counted'] as const) : (['counted', 'plain'] as const);
  for (const side of order) checkTimes[side].push(await timeChecks(side === 'plain' ? plainLimiter : countedLimiter));
}
await countedUsage.close();
const checkDiffs = checkTimes.counted.map((t, i) => t - checkTimes.plain[i]!).sort((a, b) => a - b);
const checkCostNs = Number(median(checkDiffs).toFixed(0));
const checkIqrNs = `${checkDiffs[Math.floor(checkDiffs.length / 4)]!.toFixed(0)}..${checkDiffs[Math.floor((3 * checkDiffs.length) / 4)]!.toFixed(0)}`;
console.log(`limiter.check(): ${median(checkTimes.plain).toFixed(0)} CPU ns without the counter; counting adds ${checkCostNs} ns (IQR ${checkIqrNs})`);

// The counter's own share of that: record() alone, over the same 10,000-key rotation.
const alone = createUsageCounter({ store: createMemoryUsageStore(), flushIntervalMs: 3_600_000, pruneIntervalMs: false });
const events = Array.from({ length: KEY_COUNT }, (_, i) => ({ keyId: `key_${i}`, ownerId: `owner_${i % 100}`, outcome: 'allowed' as const, policy: 'default', cost: 1, remaining: 9 }));
const RECORDS = setting('BENCH_RECORDS', 2_000_000, 1000);
const recordNs: number[] = [];
for (let round = 0; round < Math.min(ROUNDS, 7); round++) {
  const start = process.cpuUsage().user;
  for (let i = 0; i < RECORDS; i++) alone.record(events[(i * 7919) % KEY_COUNT]!);
  recordNs.push(((process.cpuUsage().user - start) * 1000) / RECORDS);
}
await alone.close();
const recordCostNs = Number(median(recordNs).toFixed(0));
console.log(`record() alone: ${recordCostNs} CPU ns per event (median of ${recordNs.length} rounds of ${RECORDS})`);

// 2 and 3: PostgreSQL, or PGlite when no server answers.
let client: Queryable & { end?: () => Promise<void> };
let engine = 'PostgreSQL';
const schema = `bench_usage_${process.pid}`;
try {
  const pool = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', max: 2, connectionTimeoutMillis: 2000 });
  await pool.query('SELECT 1');
  client = pool;
} catch (error) {
  console.warn(`PostgreSQL not reachable (${(error as Error).message}): measuring on PGlite`);
  const lite = await PGlite.create();
  client = Object.assign(lite, { end: () => lite.close() });
  engine = 'PGlite';
}
await migrate(client as never, { schema });
const store = createPostgresUsageStore({ client, schema });
const MINUTE = 60_000;
const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
const time = async (fn: () => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};

const flushDeltas = (minute: number): UsageDelta[] =>
  Array.from({ length: FLUSH_KEYS }, (_, i) => ({ keyId: `key_flush_${i}`, ownerId: `owner_${i % 100}`, minute, requests: [40, 1, 0, 1, 0, 0, 0, 0, 0], credits: 40 }));
const insertMs: number[] = [];
const updateMs: number[] = [];
for (let m = 0; m < (ROUNDS > 1 ? 5 : 1); m++) {
  insertMs.push(await time(() => store.add(flushDeltas(day + m * MINUTE))));
  updateMs.push(await time(() => store.add(flushDeltas(day + m * MINUTE))));
}
const flush = {
  engine,
  keys: FLUSH_KEYS,
  statementsPerFlush: 1,
  rowsPerFlush: 3 * FLUSH_KEYS,
  statementsPerSecondAt5s: 0.2,
  firstOfMinuteMs: Number(median(insertMs).toFixed(1)),
  laterInMinuteMs: Number(median(updateMs).toFixed(1)),
};
console.log(`flush of ${FLUSH_KEYS} keys on ${engine}: 1 statement, ${flush.rowsPerFlush} rows; ${flush.firstOfMinuteMs} ms first in a minute, ${flush.laterInMinuteMs} ms later`);

// Storage: a fresh schema, so the table holds only this day.
const storageSchema = `${schema}_s`;
await migrate(client as never, { schema: storageSchema });
const spreadStore = createPostgresUsageStore({ client, schema: storageSchema });
// Zipf-like (s = 1): key k is drawn with weight 1/(k+1).
const weights = Array.from({ length: SPREAD_KEYS }, (_, k) => 1 / (k + 1));
const cumulative: number[] = [];
weights.reduce((sum, w, k) => (cumulative[k] = sum + w), 0);
const totalWeight = cumulative.at(-1)!;
// mulberry32: a seeded generator, so every run spreads the requests alike.
let seed = 42;
const random = (): number => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
};
const cells = new Map<string, UsageDelta>();
for (let r = 0; r < REQUESTS; r++) {
  const x = random() * totalWeight;
  let lo = 0;
  let hi = SPREAD_KEYS - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  const minute = day + Math.floor(random() * 1440) * MINUTE;
  const id = `${lo}|${minute}`;
  let cell = cells.get(id);
  if (cell === undefined) cells.set(id, (cell = { keyId: `key_${String(lo).padStart(5, '0')}_abcdefghijkl`, ownerId: `owner_${lo % 50}`, minute, requests: [0, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 }));
  const roll = random();
  const outcome = roll < 0.95 ? 0 : roll < 0.98 ? 1 : roll < 0.99 ? 2 : 3;
  (cell.requests as number[])[outcome]!++;
  if (outcome === 0) cell.credits++;
}
const all = [...cells.values()].sort((a, b) => a.minute - b.minute);
for (let i = 0; i < all.length; i += 10_000) await spreadStore.add(all.slice(i, i + 10_000));
await client.query('VACUUM ANALYZE "' + storageSchema + '"."keyset_usage"');
const sizeRows = await client.query(
  `SELECT pg_total_relation_size('"${storageSchema}"."keyset_usage"')::text AS total, pg_relation_size('"${storageSchema}"."keyset_usage"')::text AS heap,
     (SELECT count(*) FROM "${storageSchema}"."keyset_usage")::text AS rows`,
);
const size = sizeRows.rows[0] as { total: string; heap: string; rows: string };
const storage = {
  engine,
  requests: REQUESTS,
  keys: SPREAD_KEYS,
  keyMinutes: cells.size,
  rows: Number(size.rows),
  bytes: Number(size.total),
  heapBytes: Number(size.heap),
  bytesPerRow: Number((Number(size.total) / Number(size.rows)).toFixed(1)),
  bytesPerMillionRequests: Math.round((Number(size.total) / REQUESTS) * 1e6),
};
console.log(
  `storage on ${engine}: ${REQUESTS} requests over a day, ${SPREAD_KEYS} keys (Zipf) → ${storage.keyMinutes} key-minutes, ${storage.rows} rows, ` +
    `${(storage.bytes / 1e6).toFixed(2)} MB with indexes (${storage.bytesPerRow} B/row, ${(storage.bytesPerMillionRequests / 1e6).toFixed(2)} MB per million requests)`,
);
await client.query(`DROP SCHEMA "${schema}" CASCADE`);
await client.query(`DROP SCHEMA "${storageSchema}" CASCADE`);
await client.end?.();
save('usage', { rounds: ROUNDS, batch: BATCH, keys: KEY_COUNT, ab: { ...ab, recordNs: recordCostNs, checkCostNs, checkIqrNs }, flush, storage });
