/**
 * Usage counter memory through a flush outage: what a pending key-minute costs, that
 * nothing grows past `maxPendingKeys`, and that memory comes back once flushes succeed.
 *
 * 1. In process, no database: BENCH_USAGE_KEYS keys (25,000) send a request every
 *    simulated minute (an injected clock) to a store whose `add` fails, for enough minutes
 *    to offer 1.5 times the cap; then the store recovers. Heap and array buffers after a
 *    full GC (`--expose-gc`, as `pnpm bench` runs it): before, at the cap, after recovery.
 *    Bytes per pending key-minute = (at the cap − before) / key-minutes held.
 * 2. The same traffic against PostgreSQL through node-postgres with the example's pool
 *    bounds (statement_timeout, query_timeout), the server a PostgreSQL of the benchmark's
 *    own frozen with SIGSTOP (every process) for BENCH_FREEZE_ROUNDS simulated minutes,
 *    then thawed (a simulated minute lasts BENCH_ROUND_MS, 3 s; the counter flushes every
 *    500 ms, and backs off while the store fails): RSS, heap and array buffers each round, the peak, and after recovery.
 *    Skipped without initdb.
 *
 * BENCH_USAGE_COUNTER: a module path to load `createUsageCounter` from instead of
 * @keyset/core (to measure an older counter with the same traffic).
 * Env: BENCH_USAGE_KEYS (25,000), BENCH_USAGE_CAP (100,000), BENCH_FREEZE_ROUNDS (8).
 */
import type { DecisionEvent, UsageCounter, UsageCounterOptions, UsageDelta, UsageStore } from '@keyset/core';
import { createMemoryUsageStore } from '@keyset/core';
import { createPostgresUsageStore, migrate } from '@keyset/postgres';
import pg from 'pg';
import { ownPostgresAvailable, startOwnPostgres } from '../test/support/own-postgres.ts';
import { save, setting } from './support.ts';

const KEYS = setting('BENCH_USAGE_KEYS', 25_000, 200);
const CAP = setting('BENCH_USAGE_CAP', 100_000, 600);
const FREEZE_ROUNDS = setting('BENCH_FREEZE_ROUNDS', 10, 3);
/** Real milliseconds per simulated minute. */
const ROUND_MS = setting('BENCH_ROUND_MS', 3_000, 100);
const MINUTE = 60_000;
const MB = 1024 * 1024;

const { createUsageCounter } = (await import(process.env.BENCH_USAGE_COUNTER ?? '@keyset/core')) as {
  createUsageCounter: (options: UsageCounterOptions) => UsageCounter;
};
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

interface Memory {
  rssMb: number;
  heapMb: number;
  arrayBuffersMb: number;
}
function memory(): Memory {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rssMb: round(m.rss / MB), heapMb: round(m.heapUsed / MB), arrayBuffersMb: round(m.arrayBuffers / MB) };
}
const round = (n: number): number => Math.round(n * 10) / 10;
const quiet = { warn: () => undefined };

const keyIds = Array.from({ length: KEYS }, (_, i) => `key_${String(i).padStart(8, '0')}_${Math.random().toString(36).slice(2, 10)}`);
const events: DecisionEvent[] = keyIds.map((keyId, i) => ({ keyId, ownerId: `cus_${i % 1000}`, outcome: 'allowed', policy: 'default', cost: 1, remaining: 0 }));
/** One simulated minute: every key sends two requests. */
function minuteOfTraffic(counter: UsageCounter): void {
  for (const event of events) counter.record(event);
  for (const event of events) counter.record(event);
}

// 1. In process.
async function inProcess(): Promise<Record<string, unknown>> {
  // A store that keeps nothing it is given (a database elsewhere): what stays is the counter's.
  let failing = true;
  let written = 0;
  const store: UsageStore = {
    ...createMemoryUsageStore(),
    add: async (deltas: readonly UsageDelta[]) => {
      if (failing) throw new Error('database down');
      written += deltas.length;
    },
  };
  let now = 1_000 * MINUTE;
  const counter = createUsageCounter({ store, clock: () => now, flushIntervalMs: 3_600_000, pruneIntervalMs: false, maxPendingKeys: CAP, logger: quiet });
  const before = memory();
  const minutes = Math.ceil((CAP * 1.5) / KEYS);
  let peakPending = 0;
  for (let m = 0; m < minutes; m++) {
    minuteOfTraffic(counter);
    await counter.flush().catch(() => undefined);
    peakPending = Math.max(peakPending, counter.pending);
    now += MINUTE;
  }
  const atCap = memory();
  const held = counter.pending;
  failing = false;
  await counter.flush();
  const after = memory();
  await counter.close();
  const bytesPerKeyMinute = Math.round((((atCap.heapMb - before.heapMb) + (atCap.arrayBuffersMb - before.arrayBuffersMb)) * MB) / held);
  const result = { keys: KEYS, cap: CAP, offeredKeyMinutes: minutes * KEYS, held, written, peakPending, before, atCap, after, bytesPerKeyMinute };
  console.log('\nin process, store failing then recovering');
  console.table({ before, atCap, after });
  console.log(`held ${held} key-minutes (peak ${peakPending}, cap ${CAP}): ${bytesPerKeyMinute} bytes each (heap + array buffers)`);
  return result;
}

// 2. PostgreSQL frozen with SIGSTOP.
async function frozenPostgres(): Promise<Record<string, unknown> | undefined> {
  if (!ownPostgresAvailable()) return undefined;
  const server = await startOwnPostgres();
  try {
    // The example's pool: 10 connections, statement_timeout 5 s, query_timeout 500 ms past it.
    const pool = new pg.Pool({ connectionString: server.url, max: 10, statement_timeout: 5_000, query_timeout: 5_500, connectionTimeoutMillis: 5_000 });
    pool.on('error', () => undefined);
    await migrate(pool);
    let now = Date.UTC(2031, 0, 1);
    let statements = 0;
    const client = { query: (text: string, params?: unknown[]) => (statements++, pool.query(text, params)) };
    const counter = createUsageCounter({ store: createPostgresUsageStore({ client }), clock: () => now, flushIntervalMs: 500, pruneIntervalMs: false, maxPendingKeys: CAP, logger: quiet });
    const samples: (Memory & { phase: string; pending: number; statements: number })[] = [];
    const round = async (phase: string): Promise<void> => {
      minuteOfTraffic(counter);
      now += MINUTE;
      // A simulated minute lasts a real second: several flush attempts each.
      await new Promise((resolve) => setTimeout(resolve, ROUND_MS));
      samples.push({ phase, pending: counter.pending, statements, ...memory() });
    };
    const before = memory();
    for (let i = 0; i < 3; i++) await round('healthy');
    server.freeze();
    for (let i = 0; i < FREEZE_ROUNDS; i++) await round('frozen');
    server.thaw();
    for (let i = 0; i < 6; i++) await round('recovering');
    // Traffic stops; the backlog drains.
    for (let i = 0; i < 180 && counter.pending > 0; i++) await new Promise((resolve) => setTimeout(resolve, 500));
    const drained = counter.pending;
    await counter.close();
    const after = memory();
    await pool.end();
    const peak = samples.reduce((p, s) => (s.rssMb > p.rssMb ? s : p), samples[0]!);
    console.log('\nPostgreSQL frozen with SIGSTOP, then thawed');
    console.table(samples);
    console.log(`before ${before.rssMb} MB RSS, peak ${peak.rssMb} MB (${peak.phase}), after recovery ${after.rssMb} MB; pending left ${drained}`);
    return { keys: KEYS, cap: CAP, freezeRounds: FREEZE_ROUNDS, roundMs: ROUND_MS, before, peak, after, samples };
  } finally {
    await server.stop();
  }
}

const inproc = await inProcess();
const frozen = await frozenPostgres();
save(process.env.BENCH_USAGE_COUNTER === undefined ? 'usage-memory' : 'usage-memory-other-counter', { inProcess: inproc, frozenPostgres: frozen });
