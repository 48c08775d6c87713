/**
 * Usage flushes count exactly once when the database freezes or the connection is cut
 * after a flush committed: the client gives up on a statement the server then runs (or
 * already ran), and the counter's retry of that batch must add nothing. Two instances
 * (two counters, each with its own pool) count the same keys; the stored totals must
 * equal the events they were given.
 * - frozen: a PostgreSQL server of the test's own, stopped with SIGSTOP (every process of
 *   it) while a flush's statement is on its way, thawed after the client's query_timeout;
 * - cut: a TCP proxy in front of the shared server holds a flush's reply, the test waits
 *   until the flush's counts are visible in the table, then drops the connections.
 * Skips without initdb (the own server) or without TEST_DATABASE_URL (the cut).
 */
import { createUsageCounter, type DecisionOutcome, type UsageCounter, type UsageStore } from '@keyset/core';
import { USAGE_OUTCOMES } from '@keyset/core/adapter';
import { ownPostgresAvailable, postgresUrl, startOwnPostgres, startTcpProxy, uniqueSchema, type OwnPostgres, type TcpProxy } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresUsageStore } from './postgres-usage-store.ts';

const KEYS = Array.from({ length: 7 }, (_, i) => `key_flush_${i}`);
const quiet = { warn: () => undefined };

/** Two instances counting the same keys, and what they were told (per key and outcome). */
function instances(pools: readonly pg.Pool[], schema: string | undefined, flushIntervalMs: number) {
  const counters: UsageCounter[] = [];
  for (const pool of pools) {
    const store = createPostgresUsageStore({ client: pool, ...(schema === undefined ? {} : { schema }) });
    counters.push(createUsageCounter({ store, flushIntervalMs, pruneIntervalMs: false, logger: quiet }));
  }
  const sent = new Map<string, number[]>(KEYS.map((key) => [key, USAGE_OUTCOMES.map(() => 0)]));
  let n = 0;
  return {
    counters,
    sent,
    traffic(count: number): void {
      for (let i = 0; i < count; i++, n++) {
        const keyId = KEYS[n % KEYS.length] as string;
        const outcome = USAGE_OUTCOMES[n % 4 === 0 ? 5 : n % 3] as Exclude<DecisionOutcome, 'would_refuse'>;
        counters[n % counters.length]!.record({ keyId, ownerId: 'owner_flush', outcome, policy: 'default', cost: 1, remaining: 0 });
        (sent.get(keyId) as number[])[USAGE_OUTCOMES.indexOf(outcome)]!++;
      }
    },
  };
}

/** Every key's stored totals, per outcome (one day bucket holds the whole test). */
async function stored(store: UsageStore): Promise<Map<string, number[]>> {
  const to = Date.now() + 60_000;
  const out = new Map<string, number[]>();
  for (const keyId of KEYS) {
    const buckets = await store.read({ keyId, from: to - 2 * 86_400_000, to, interval: 'day' });
    out.set(keyId, USAGE_OUTCOMES.map((o) => buckets.reduce((sum, b) => sum + b.requests[o], 0)));
  }
  return out;
}

/** Waits until no session but the caller's runs a statement (what a thawed server held has run). */
async function whenIdle(pool: pg.Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`);
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ownAvailable = ownPostgresAvailable();

describe.skipIf(!ownAvailable)('usage flushes on a PostgreSQL frozen with SIGSTOP (own server)', () => {
  let server: OwnPostgres;
  let admin: pg.Pool;
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    server = await startOwnPostgres();
    admin = new pg.Pool({ connectionString: server.url, max: 1 });
    await migrate(admin);
  }, 60_000);

  afterAll(async () => {
    server?.thaw();
    for (const pool of pools) await pool.end().catch(() => undefined);
    await admin?.end().catch(() => undefined);
    await server?.stop();
  });

  it('two instances, frozen twice under traffic: the stored totals equal the events counted, none twice', async () => {
    for (let i = 0; i < 2; i++) {
      // query_timeout: the client gives up on a server that says nothing, as the example's pool does.
      const pool = new pg.Pool({ connectionString: server.url, max: 3, query_timeout: 1_000, connectionTimeoutMillis: 1_000 });
      pool.on('error', () => undefined);
      pools.push(pool);
    }
    // The timer flushes every 100 ms too, beside the test's own flush() calls.
    const { counters, sent, traffic } = instances(pools, undefined, 100);
    traffic(50);
    await Promise.all(counters.map((c) => c.flush()));
    for (let round = 0; round < 2; round++) {
      traffic(100);
      server.freeze();
      // These statements reach the frozen server's sockets; the client gives up on them,
      // and the server runs them once thawed.
      const outcomes = await Promise.all(counters.map((c) => c.flush().then(() => 'written', () => 'failed')));
      expect(outcomes).toEqual(['failed', 'failed']);
      traffic(100);
      server.thaw();
      await whenIdle(admin);
      traffic(100);
      // The retries: the batches in doubt were written by the thawed server already.
      await Promise.all(counters.map((c) => c.flush()));
    }
    await Promise.all(counters.map((c) => c.close()));
    await whenIdle(admin);
    expect(await stored(createPostgresUsageStore({ client: admin }))).toEqual(sent);
  }, 60_000);
});

const sharedUrl = await postgresUrl();

describe.skipIf(sharedUrl === undefined)('usage flushes over a connection cut after the commit (shared server, TCP proxy)', () => {
  const schema = uniqueSchema('keyset_usage_cut');
  let direct: pg.Pool;
  let proxy: TcpProxy;
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    direct = new pg.Pool({ connectionString: sharedUrl, max: 2 });
    await migrate(direct, { schema });
    proxy = await startTcpProxy(sharedUrl!);
  });

  afterAll(async () => {
    for (const pool of pools) await pool.end().catch(() => undefined);
    await proxy?.close();
    await direct?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await direct?.end();
  });

  it('two instances, each flush cut after its commit: the stored totals equal the events counted, none twice', async () => {
    const url = new URL(sharedUrl!);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    for (let i = 0; i < 2; i++) {
      const pool = new pg.Pool({ connectionString: url.href, max: 3 });
      pool.on('error', () => undefined);
      pools.push(pool);
    }
    // Only the test's own flush() calls write: each one is cut at a known point.
    const { counters, sent, traffic } = instances(pools, schema, 3_600_000);
    const store = createPostgresUsageStore({ client: direct, schema });
    const total = async (): Promise<number> => [...(await stored(store)).values()].flat().reduce((a, b) => a + b, 0);
    traffic(40);
    await Promise.all(counters.map((c) => c.flush()));
    for (let round = 0; round < 2; round++) {
      const before = await total();
      traffic(100);
      // Replies are held: each flush commits on the server and waits for its answer.
      proxy.latencyMs = 3_600_000;
      const flushes = counters.map((c) => c.flush().then(() => 'written', () => 'failed'));
      while ((await total()) < before + 100) await new Promise((resolve) => setTimeout(resolve, 20));
      proxy.cut();
      proxy.latencyMs = 0;
      expect(await Promise.all(flushes)).toEqual(['failed', 'failed']);
      traffic(100);
      await Promise.all(counters.map((c) => c.flush()));
    }
    await Promise.all(counters.map((c) => c.close()));
    expect(await stored(store)).toEqual(sent);
  }, 60_000);
});
