/**
 * What one Redis and one PostgreSQL primary sustain under keyset's own load: each
 * operation a request makes of a shared store, sent through @keyset/redis and
 * @keyset/postgres exactly as the guard sends it (their Lua scripts, their SQL), from
 * many concurrent callers over many keys. docs/scaling.md carries these figures to
 * 10, 100 and 1,000 instances.
 *
 * Per operation: round trips (Redis: commands counted by INFO commandstats), bytes on the
 * wire each way, the server's CPU time per operation (Redis: INFO cpu; PostgreSQL: the
 * backends' utime + stime from /proc), WAL bytes per operation on PostgreSQL, and the
 * operations per second reached here. Redis runs commands on one thread, so
 * 1 / (server CPU per operation) is the ceiling of one Redis process, or of one Redis
 * Cluster shard; on PostgreSQL the same figure is per core of the primary.
 *
 * Two rows put a whole request with every feature on (a key with an owner: in-flight caps
 * of both, rate limits of both, quotas of both) side by side: the per-part stores, 6
 * calls one after another, and the one request store, 2 calls. Then over HTTP
 * (bench/capacity-http.ts): the latency a shared Redis adds to such a request, the same
 * stack served with memory stores, the per-part Redis stores and the request store; and
 * a client hammering a key over its rate limit, refusals per second and Redis calls.
 *
 * Redis is a redis-server of the benchmark's own (bench/own-redis.ts), so nothing else
 * counts; PostgreSQL is TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 * in a schema of its own, dropped at the end; on the same machine as the benchmark, so
 * the load generator and the server share its cores (the figures are a floor).
 *
 * Env: BENCH_SECONDS (5 per operation), BENCH_KEYS (100,000 distinct keys),
 * BENCH_OWNERS (1,000), BENCH_CONCURRENCY (64 callers on Redis, a quarter of them on
 * PostgreSQL, one connection each there), BENCH_WHOLE_ROUNDS (10 turns each of the two
 * whole-request rows); over HTTP, bench/capacity-http.ts's settings.
 * Smoke mode (BENCH_SMOKE=1): 40 operations of each, 4 callers, 100 keys, a few requests
 * over HTTP.
 *
 * Run: npx -y pnpm@10.34.9 bench capacity
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createKeyAdmin, createKeyring, type RateLimitPolicy } from '@keyset/core';
import type { QuotaSpend } from '@keyset/core/adapter';
import { createPostgresKeyStore, createPostgresQuotaStore, migrate } from '@keyset/postgres';
import { createRedisConcurrencyStore, createRedisQuotaStore, createRedisRateLimitStore, createRedisRequestStore } from '@keyset/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { httpCases } from './capacity-http.ts';
import { ownRedis } from './own-redis.ts';
import { save, setting, SMOKE } from './support.ts';

const SECONDS = setting('BENCH_SECONDS', 5, 0);
/** Turns each way takes in the whole-request comparison (SECONDS in all each way). */
const WHOLE_ROUNDS = setting('BENCH_WHOLE_ROUNDS', 10, 2);
const SMOKE_OPS = 40;
const KEYS = setting('BENCH_KEYS', 100_000, 100);
const OWNERS = setting('BENCH_OWNERS', 1_000, 10);
const CONCURRENCY = setting('BENCH_CONCURRENCY', 64, 4);
const PG_CONCURRENCY = Math.max(1, Math.floor(CONCURRENCY / 4));
/** Keys issued in PostgreSQL for the cold verification (each an INSERT, so fewer). */
const PG_KEYS = setting('BENCH_PG_KEYS', 2_000, 20);
const LAST_USED_BATCH = Math.min(1_000, PG_KEYS);

/** The two rows docs/scaling.md compares (report.mjs finds them by these names). */
const EVERY_FEATURE_PARTS = 'every feature, per-part stores';
const EVERY_FEATURE_ONE = 'every feature, one request store';

const keyOf = (i: number): string => `key_${i % KEYS}`;
const ownerOf = (i: number): string => `owner:cus_${i % OWNERS}`;

/** What one operation costs, from the counters around a run. */
export interface Measured {
  operation: string;
  store: 'Redis' | 'PostgreSQL';
  ops: number;
  opsPerSecond: number;
  roundTrips: number;
  /** Redis: the commands each script runs inside Redis per operation. */
  commandsInside?: number;
  /**
   * Redis: time spent running the commands clients sent, per operation (`INFO commandstats`
   * `usec` of EVALSHA and EVAL, which holds the commands their scripts run): execution
   * only, without reading requests and writing replies, which `serverCpuMicros` holds too.
   */
  commandMicros?: number;
  /** Redis: of `commandMicros`, the time of the commands the scripts run (the rest is the scripts' own Lua). */
  insideMicros?: number;
  bytesToServer: number;
  bytesFromServer: number;
  serverCpuMicros: number;
  /** 1e6 / serverCpuMicros: what one Redis thread, or one core of the primary, sustains. */
  ceilingPerCore: number;
  walBytes?: number;
}

/** Runs `op` from `callers` concurrent loops for `seconds` (SMOKE_OPS operations in smoke mode). */
async function drive(callers: number, op: (caller: number, i: number) => Promise<unknown>, seconds = SECONDS): Promise<{ ops: number; seconds: number }> {
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const more = (): boolean => (SMOKE ? next < SMOKE_OPS : performance.now() < deadline);
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (more()) await op(caller, next++);
    }),
  );
  return { ops: next, seconds: (performance.now() - started) / 1000 };
}

// --- Redis ----------------------------------------------------------------------------

interface RedisCounters {
  /** Commands clients sent (each a round trip): EVALSHA and EVAL, and SCRIPT LOAD. */
  sent: number;
  /** Microseconds Redis spent running the commands clients sent (commandstats `usec`). */
  sentMicros: number;
  /** Commands the scripts ran inside Redis (commandstats counts those too). */
  inside: number;
  insideMicros: number;
  bytesIn: number;
  bytesOut: number;
  cpuSeconds: number;
}

async function redisCounters(redis: Redis): Promise<RedisCounters> {
  const info = await redis.info('all');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  let sent = 0;
  let sentMicros = 0;
  let inside = 0;
  let insideMicros = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (m[1] === 'info') continue;
    if (/^(evalsha|eval|evalsha_ro|eval_ro|script\|load)$/.test(m[1]!)) {
      sent += Number(m[2]);
      sentMicros += Number(m[3]);
    } else {
      inside += Number(m[2]);
      insideMicros += Number(m[3]);
    }
  }
  return {
    sent,
    sentMicros,
    inside,
    insideMicros,
    bytesIn: field('total_net_input_bytes'),
    bytesOut: field('total_net_output_bytes'),
    cpuSeconds: field('used_cpu_user') + field('used_cpu_sys'),
  };
}

async function measureRedis(
  redis: Redis,
  operation: string,
  clients: Redis[],
  op: (client: Redis, i: number) => Promise<unknown>,
): Promise<Measured> {
  return (await measureRedisRounds(redis, clients, [{ operation, op }], 1))[0]!;
}

/**
 * Runs `cases` in turns, `rounds` times SECONDS / rounds each (the order reversed every
 * other round), and sums each case's counters over its turns: cases compared with each
 * other share the machine's changing load alike.
 */
async function measureRedisRounds(
  redis: Redis,
  clients: Redis[],
  cases: { operation: string; op: (client: Redis, i: number) => Promise<unknown> }[],
  rounds: number,
): Promise<Measured[]> {
  for (const c of cases) await c.op(clients[0]!, 0); // loads the scripts: not counted
  const zero = { sent: 0, sentMicros: 0, inside: 0, insideMicros: 0, bytesIn: 0, bytesOut: 0, cpuSeconds: 0 };
  const totals = cases.map(() => ({ ops: 0, seconds: 0, ...zero }));
  let next = 1;
  for (let round = 0; round < rounds; round++) {
    const order = cases.map((_, k) => (round % 2 === 0 ? k : cases.length - 1 - k));
    for (const k of order) {
      const before = await redisCounters(redis);
      const start = next;
      const { ops, seconds } = await drive(CONCURRENCY, (caller, i) => cases[k]!.op(clients[caller % clients.length]!, start + i), SECONDS / rounds);
      next += ops;
      const after = await redisCounters(redis);
      const total = totals[k]!;
      total.ops += ops;
      total.seconds += seconds;
      // INFO itself is left out of the count, not out of the bytes (one call before, one after: noise).
      for (const field of Object.keys(zero) as (keyof typeof zero)[]) total[field] += after[field] - before[field];
    }
  }
  return cases.map(({ operation }, k) => {
    const t = totals[k]!;
    const serverCpuMicros = (t.cpuSeconds * 1e6) / t.ops;
    return {
      operation,
      store: 'Redis',
      ops: t.ops,
      opsPerSecond: Math.round(t.ops / t.seconds),
      roundTrips: t.sent / t.ops,
      commandsInside: t.inside / t.ops,
      commandMicros: t.sentMicros / t.ops,
      insideMicros: t.insideMicros / t.ops,
      bytesToServer: Math.round(t.bytesIn / t.ops),
      bytesFromServer: Math.round(t.bytesOut / t.ops),
      serverCpuMicros,
      ceilingPerCore: Math.round(1e6 / serverCpuMicros),
    };
  });
}

async function redisCases(): Promise<{ rows: Measured[]; server: string }> {
  const server = await ownRedis();
  const options = { enableOfflineQueue: true, maxRetriesPerRequest: 1 };
  const admin = new Redis(server.url, options);
  const clients = Array.from({ length: 4 }, () => new Redis(server.url, options));
  try {
    const prefix = `keyset:capacity:${process.pid}:`;
    // Each store over the four connections, as four instances would send it.
    const limits = clients.map((redis) => createRedisRateLimitStore({ redis, prefix: `${prefix}rl:`, timeoutMs: 5_000 }));
    const quotas = clients.map((redis) => createRedisQuotaStore({ redis, prefix: `${prefix}q:`, timeoutMs: 5_000 }));
    const leases = clients.map((redis) => createRedisConcurrencyStore({ redis, prefix: `${prefix}in:`, timeoutMs: 5_000 }));
    const requests = clients.map((redis) =>
      createRedisRequestStore({ redis, timeoutMs: 5_000, prefixes: { rateLimits: `${prefix}one:rl:`, quotas: `${prefix}one:q:`, leases: `${prefix}one:in:` } }),
    );
    const store = <T>(list: T[], client: Redis): T => list[clients.indexOf(client)]!;
    const perSecond: RateLimitPolicy = { limit: 100_000, windowSeconds: 1, name: 'second' };
    const perHour: RateLimitPolicy = { limit: 100_000_000, windowSeconds: 3600, name: 'hour' };
    const spend = (key: string, partition: string): QuotaSpend => ({ key, partition, generation: 1, initial: 1e12, period: 0, refillAmount: null, cost: 1 });
    const rows: Measured[] = [];
    rows.push(
      await measureRedis(admin, 'rate limit: key policy (1 EVALSHA)', clients, (c, i) => store(limits, c).decide([{ key: keyOf(i * 7919), policy: perSecond }])),
    );
    rows.push(
      await measureRedis(admin, 'rate limit: key + owner policies (1 EVALSHA)', clients, (c, i) => {
        const key = keyOf(i * 7919);
        const partition = ownerOf(i * 7919);
        return store(limits, c).decide([
          { key, policy: perSecond, partition },
          { key: partition, policy: perHour, partition },
        ]);
      }),
    );
    rows.push(
      await measureRedis(admin, 'quota: key + owner, all-or-nothing (1 EVALSHA)', clients, (c, i) => {
        const partition = ownerOf(i * 7919);
        return store(quotas, c).spendAll([spend(keyOf(i * 7919), partition), spend(partition, partition)]);
      }),
    );
    rows.push(
      await measureRedis(admin, 'in-flight lease: acquire + release (2 EVALSHA)', clients, async (c, i) => {
        const holder = keyOf(i * 7919);
        const lease = `lease-${i}`;
        await store(leases, c).acquire(holder, lease, 1_000, 30_000);
        await store(leases, c).release(holder, lease);
      }),
    );
    // A whole admitted request with every feature on, a key with an owner, both ways, in
    // turns (WHOLE_ROUNDS of each, SECONDS in all per way): the figures docs/scaling.md compares.
    const everyFeature = await measureRedisRounds(
      admin,
      clients,
      [
        {
          // Before the request store: each part on its own store, one call after another (the
          // key's lease, the owner's, the rate limits, the quotas; after the response both leases back).
          operation: `${EVERY_FEATURE_PARTS}: leases, rate limits, quotas, releases (6 EVALSHA)`,
          op: async (c, i) => {
            const key = keyOf(i * 7919);
            const partition = ownerOf(i * 7919);
            const lease = `lease-${i}`;
            const leaseStore = store(leases, c);
            await leaseStore.acquire(`key:${key}`, lease, 1_000, 30_000, partition);
            await leaseStore.acquire(partition, lease, 100_000, 30_000, partition);
            await store(limits, c).decide([
              { key, policy: perSecond, partition },
              { key: partition, policy: perHour, partition },
            ]);
            await store(quotas, c).spendAll([spend(key, partition), spend(partition, partition)]);
            await leaseStore.release(`key:${key}`, lease, partition);
            await leaseStore.release(partition, lease, partition);
          },
        },
        {
          // The request store: one call deciding both leases, both rate-limit pairs and both
          // quotas, one giving the leases back.
          operation: `${EVERY_FEATURE_ONE}: decide + release (2 EVALSHA)`,
          op: async (c, i) => {
            const key = keyOf(i * 7919);
            const partition = ownerOf(i * 7919);
            const held = [
              { holder: `key:${key}`, partition, leaseId: `lease-${i}`, max: 1_000, ttlMs: 30_000 },
              { holder: partition, partition, leaseId: `lease-${i}`, max: 100_000, ttlMs: 30_000 },
            ];
            const one = store(requests, c);
            await one.decideRequest({
              limits: [
                { key, policy: perSecond, partition },
                { key: partition, policy: perHour, partition },
              ],
              quotas: [spend(key, partition), spend(partition, partition)],
              leases: held,
            });
            await one.releaseLeases(held);
          },
        },
      ],
      WHOLE_ROUNDS,
    );
    rows.push(...everyFeature);
    rows.push(
      await measureRedis(admin, 'refused-credential budget: one refusal counted (1 EVALSHA)', clients, (c, i) =>
        store(limits, c).decide([{ key: `refused:198.51.100.${i % 250}`, policy: perHour }]),
      ),
    );
    return { rows, server: server.own ? `own redis-server ${(await admin.info('server')).match(/redis_version:(\S+)/)?.[1]}` : server.url };
  } finally {
    for (const c of [admin, ...clients]) c.disconnect();
    server.child?.kill('SIGKILL');
  }
}

// --- PostgreSQL -----------------------------------------------------------------------

/** CPU seconds of the given backends so far (utime + stime from /proc/<pid>/stat, in clock ticks of 10 ms). */
function backendCpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** Bytes a pg.Client has written and read on its socket (node-postgres keeps it as `connection.stream`). */
function socketBytes(clients: pg.Client[]): { out: number; in: number } {
  let out = 0;
  let inn = 0;
  for (const c of clients) {
    const stream = (c as unknown as { connection?: { stream?: { bytesWritten?: number; bytesRead?: number } } }).connection?.stream;
    out += stream?.bytesWritten ?? NaN;
    inn += stream?.bytesRead ?? NaN;
  }
  return { out, in: inn };
}

async function measurePostgres(
  admin: pg.Client,
  clients: pg.Client[],
  pids: number[],
  operation: string,
  op: (caller: number, i: number) => Promise<unknown>,
): Promise<Measured> {
  await op(0, 0);
  const lsn = async (): Promise<string> => String((await admin.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l);
  const walBefore = await lsn();
  const cpuBefore = backendCpuSeconds(pids);
  const bytesBefore = socketBytes(clients);
  const { ops, seconds } = await drive(clients.length, op);
  const cpuAfter = backendCpuSeconds(pids);
  const bytesAfter = socketBytes(clients);
  const wal = Number((await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [walBefore])).rows[0].d);
  const serverCpuMicros = ((cpuAfter - cpuBefore) * 1e6) / ops;
  return {
    operation,
    store: 'PostgreSQL',
    ops,
    opsPerSecond: Math.round(ops / seconds),
    roundTrips: 1,
    bytesToServer: Math.round((bytesAfter.out - bytesBefore.out) / ops),
    bytesFromServer: Math.round((bytesAfter.in - bytesBefore.in) / ops),
    serverCpuMicros,
    ceilingPerCore: Math.round(1e6 / serverCpuMicros),
    walBytes: Math.round(wal / ops),
  };
}

async function postgresCases(): Promise<{ rows: Measured[]; server: string } | undefined> {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = new pg.Client({ connectionString: url });
  try {
    await admin.connect();
  } catch (error) {
    console.warn(`PostgreSQL skipped: set TEST_DATABASE_URL to a reachable server (${(error as Error).message})`);
    return undefined;
  }
  const schema = `keyset_capacity_${process.pid}`;
  const clients = Array.from({ length: PG_CONCURRENCY }, () => new pg.Client({ connectionString: url }));
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    await migrate(admin, { schema });
    await Promise.all(clients.map((c) => c.connect()));
    const pids = await Promise.all(clients.map(async (c) => Number((await c.query('SELECT pg_backend_pid() AS p')).rows[0].p)));
    const server = String((await admin.query('SHOW server_version')).rows[0].server_version);
    const quotas = clients.map((client) => createPostgresQuotaStore({ client, schema }));
    const spend = (key: string): QuotaSpend => ({ key, generation: 1, initial: 1e12, period: 0, refillAmount: null, cost: 1 });

    // Keys for the cold verification, issued through the keyring as an application does.
    const issuing = createKeyring({ store: createPostgresKeyStore({ client: admin, schema }), prefix: 'cap_live', lastUsed: false });
    const keys: string[] = [];
    for (let i = 0; i < PG_KEYS; i++) keys.push((await createKeyAdmin(issuing).issue({ name: `svc-${i}`, scopes: ['orders:read'] })).key);
    await issuing.close();
    const keyStores = clients.map((client) => createPostgresKeyStore({ client, schema }));
    const verifiers = keyStores.map((store) => createKeyring({ store, prefix: 'cap_live', cache: false, lastUsed: false }));
    const digests = (await admin.query(`SELECT digest FROM ${schema}.keyset_secrets`)).rows.map((r: { digest: string }) => r.digest);
    const flushed = Math.min(LAST_USED_BATCH, Math.floor(digests.length / clients.length));
    const owned = clients.map((_, caller) => digests.filter((_, k) => k % clients.length === caller).slice(0, flushed));

    const rows: Measured[] = [];
    rows.push(
      await measurePostgres(admin, clients, pids, 'quota: key + owner, all-or-nothing (1 statement)', (caller, i) =>
        quotas[caller]!.spendAll([spend(keyOf(i * 7919)), spend(ownerOf(i * 7919))]),
      ),
    );
    rows.push(
      await measurePostgres(admin, clients, pids, 'quota: key + one hot owner (1 statement, one row lock)', (caller, i) =>
        quotas[caller]!.spendAll([spend(keyOf(i * 7919)), spend('owner:cus_hot')]),
      ),
    );
    rows.push(
      await measurePostgres(admin, clients, pids, 'cold key verification: findByDigest (1 SELECT)', (caller, i) => verifiers[caller]!.verify(keys[(i * 7919) % keys.length]!)),
    );
    rows.push(
      // Each caller flushes keys of its own, as instances whose keys do not overlap: two
      // flushes of overlapping keys at the same moment can deadlock (each UPDATE locks its
      // rows in the order the join yields them), which PostgreSQL ends by failing one.
      await measurePostgres(admin, clients, pids, `last-used flush: ${flushed.toLocaleString('en-US')} keys (1 UPDATE)`, (caller, i) => {
        const at = new Date(Date.UTC(2026, 0, 1) + i * 1000);
        return keyStores[caller]!.touchLastUsed(owned[caller]!.map((digest) => ({ digest, at })));
      }),
    );
    for (const v of verifiers) await v.close();
    return { rows, server: `PostgreSQL ${server}` };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

const redisResult = await redisCases();
const postgresResult = await postgresCases();
const http = await httpCases();
const rows = [...redisResult.rows, ...(postgresResult?.rows ?? [])];
console.log(`\nPer store operation (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}):`);
console.table(
  rows.map((r) => ({
    store: r.store,
    operation: r.operation,
    'ops/s here': r.opsPerSecond,
    'round trips': Number(r.roundTrips.toFixed(2)),
    'commands inside': r.commandsInside === undefined ? '' : Number(r.commandsInside.toFixed(1)),
    'command µs/op': r.commandMicros === undefined ? '' : Number(r.commandMicros.toFixed(1)),
    'of which inside µs': r.insideMicros === undefined ? '' : Number(r.insideMicros.toFixed(1)),
    'bytes →': r.bytesToServer,
    'bytes ←': r.bytesFromServer,
    'server CPU µs/op': Number(r.serverCpuMicros.toFixed(1)),
    'ceiling ops/s per core': r.ceilingPerCore,
    'WAL bytes/op': r.walBytes ?? '',
  })),
);
console.log(`\nOver HTTP, one request at a time (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}):`);
console.table(
  http.latency.map((r) => ({
    stores: r.label,
    requests: r.requests,
    'p50 µs': Math.round(r.p50Micros),
    'p99 µs': Math.round(r.p99Micros),
    'Redis adds p50 µs': Math.round(r.addedP50Micros),
    'Redis adds p99 µs': Math.round(r.addedP99Micros),
    'Redis calls/req': Number(r.redisCallsPerRequest.toFixed(2)),
    'Redis command µs/req': Number(r.redisUsecPerRequest.toFixed(1)),
    'Redis CPU µs/req': Number(r.redisCpuMicrosPerRequest.toFixed(1)),
  })),
);
console.log(`A key over its rate limit, hammered over ${http.settings.hammerConnections} connections:`);
console.table(
  http.hammer.map((r) => ({
    stores: r.label,
    'refused/s': Math.round(r.refusedPerSecond),
    refused: r.refused,
    'not refused': r.other,
    'Redis calls': r.redisCalls,
    'Redis calls/refusal': Number(r.redisCallsPerRefusal.toFixed(2)),
    'Redis CPU µs/refusal': Number(r.redisCpuMicrosPerRefusal.toFixed(1)),
    'server CPU µs/refusal': Number(r.serverCpuMicrosPerRefusal.toFixed(1)),
  })),
);
save('capacity', {
  seconds: SECONDS,
  wholeRounds: WHOLE_ROUNDS,
  keys: KEYS,
  owners: OWNERS,
  concurrency: { redis: CONCURRENCY, postgres: PG_CONCURRENCY },
  redisServer: redisResult.server,
  postgresServer: postgresResult?.server ?? null,
  rows,
  http,
});
