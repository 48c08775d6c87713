/**
 * `bench capacity` over HTTP: what a shared Redis adds to a request of the example-like
 * Hono stack with every feature on (bench/capacity-server.ts), served three ways: every
 * limit in memory, the per-part Redis stores, the one request store; each server in its
 * own process, each Redis store on a redis-server of its own so that its counters count
 * that server's traffic alone.
 *
 * - Latency: one request at a time over one keep-alive connection on loopback, from this
 *   process, so that no request waits behind another and the machine's two cores are
 *   never both busy with the benchmark: what a request waits for, not a throughput. The
 *   servers take turns in batches (the order reversed every other round), so a change in
 *   the machine's load falls on all three alike; p50 and p99 of every request's wall time,
 *   and per request the Redis calls (`INFO commandstats`, commands scripts run inside
 *   left out), their execution time (commandstats `usec`) and the redis-server's whole CPU
 *   time (`INFO cpu`: parsing, replies and background work too).
 * - Hammer: one key over its rate limit (1 request an hour), sent as fast as
 *   autocannon (bench/http/load.mjs, a process of its own) can over CONNECTIONS
 *   connections for HAMMER_SECONDS: requests refused per second, and what Redis did for
 *   them, counted the same way.
 *
 * Env: BENCH_HTTP_ROUNDS (10), BENCH_HTTP_BATCH (500 requests per server and round),
 * BENCH_HTTP_WARMUP (1,000 requests per server first), BENCH_HAMMER_SECONDS (5),
 * BENCH_HAMMER_CONNECTIONS (16). Smoke mode: 1 round of 20, 50 hammer requests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { ownRedis } from './own-redis.ts';
import { setting, SMOKE, TMP } from './support.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = setting('BENCH_HTTP_ROUNDS', 10, 1);
const BATCH = setting('BENCH_HTTP_BATCH', 500, 20);
const WARMUP = setting('BENCH_HTTP_WARMUP', 1_000, 20);
const HAMMER_SECONDS = setting('BENCH_HAMMER_SECONDS', 5, 0);
const HAMMER_CONNECTIONS = setting('BENCH_HAMMER_CONNECTIONS', 16, 2);

export const STORES = ['memory', 'redis-parts', 'redis-request'] as const;
export type Stores = (typeof STORES)[number];
export const STORE_LABELS: Record<Stores, string> = {
  memory: 'memory stores (no Redis)',
  'redis-parts': 'Redis, per-part stores',
  'redis-request': 'Redis, one request store',
};

/** The commands keyset's scripts run inside Redis: commandstats counts them, no client sends them. */
const IN_SCRIPTS = new Set(['time', 'get', 'set', 'hmget', 'hset', 'hget', 'hincrby', 'del', 'zadd', 'zrem', 'zrange', 'zcard', 'zremrangebyscore', 'zscore', 'pexpire', 'pexpireat']);

/** What a redis-server has done so far, as sent by clients. */
export interface RedisTotals {
  calls: number;
  usec: number;
  cpuMicros: number;
}

export async function redisTotals(redis: Redis): Promise<RedisTotals> {
  const info = await redis.info('all');
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (m[1] === 'info' || IN_SCRIPTS.has(m[1]!)) continue;
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return { calls, usec, cpuMicros: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6 };
}

const minus = (a: RedisTotals, b: RedisTotals): RedisTotals => ({ calls: a.calls - b.calls, usec: a.usec - b.usec, cpuMicros: a.cpuMicros - b.cpuMicros });
const plus = (a: RedisTotals, b: RedisTotals): RedisTotals => ({ calls: a.calls + b.calls, usec: a.usec + b.usec, cpuMicros: a.cpuMicros + b.cpuMicros });
const ZERO: RedisTotals = { calls: 0, usec: 0, cpuMicros: 0 };
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Server {
  stores: Stores;
  child: ChildProcess;
  port: number;
  keys: string[];
  redis?: Redis;
  redisChild?: ChildProcess;
  agent: Agent;
}

async function startServer(stores: Stores): Promise<Server> {
  const own = stores === 'memory' ? undefined : await ownRedis();
  const keysFile = join(TMP, `capacity-keys-${stores}.txt`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'capacity-server.ts'), stores, keysFile, ...(own === undefined ? [] : [own.url])], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production', ...(SMOKE ? { CAPACITY_HTTP_KEYS: '20' } : {}) },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`capacity server (${stores}) exited with ${code}`)));
  });
  return {
    stores,
    child,
    port,
    keys: readFileSync(keysFile, 'utf8').split('\n'),
    ...(own === undefined ? {} : { redis: new Redis(own.url, { maxRetriesPerRequest: 1 }), ...(own.child === undefined ? {} : { redisChild: own.child }) }),
    agent: new Agent({ keepAlive: true, maxSockets: 1 }),
  };
}

/** One GET over the server's one keep-alive connection: its status and wall time in µs. */
function request(server: Server, key: string): Promise<{ status: number; micros: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    get({ host: '127.0.0.1', port: server.port, path: '/api/orders', agent: server.agent, headers: { authorization: `ApiKey ${key}` } }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, micros: (performance.now() - started) * 1000 }));
    }).once('error', reject);
  });
}

async function serverCpuMicros(server: Server): Promise<{ cpu: number; served: number }> {
  const body = await new Promise<string>((resolve, reject) => {
    get({ host: '127.0.0.1', port: server.port, path: '/__bench/stats', agent: server.agent }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.once('end', () => resolve(text));
    }).once('error', reject);
  });
  const { user, system, served } = JSON.parse(body) as { user: number; system: number; served: number };
  return { cpu: user + system, served };
}

/** Counters of the server's Redis once its last lease has been given back (the release follows the response). */
async function settledTotals(server: Server): Promise<RedisTotals> {
  if (server.redis === undefined) return ZERO;
  await pause(20);
  return redisTotals(server.redis);
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export interface LatencyRow {
  stores: Stores;
  label: string;
  requests: number;
  non200: number;
  p50Micros: number;
  p99Micros: number;
  /** p50 and p99 minus the memory stores' (the same percentile): what Redis adds. */
  addedP50Micros: number;
  addedP99Micros: number;
  redisCallsPerRequest: number;
  redisUsecPerRequest: number;
  redisCpuMicrosPerRequest: number;
}

export interface HammerRow {
  stores: Stores;
  label: string;
  refused: number;
  other: number;
  refusedPerSecond: number;
  redisCalls: number;
  redisCallsPerRefusal: number;
  redisUsecPerRefusal: number;
  redisCpuMicrosPerRefusal: number;
  serverCpuMicrosPerRefusal: number;
}

async function latency(servers: Server[]): Promise<LatencyRow[]> {
  const samples = new Map<Stores, number[]>(servers.map((s) => [s.stores, []]));
  const counted = new Map<Stores, RedisTotals>(servers.map((s) => [s.stores, ZERO]));
  const non200 = new Map<Stores, number>(servers.map((s) => [s.stores, 0]));
  // Warm-up: every key verified and cached, every script loaded, the JIT warm.
  for (const server of servers) for (let i = 0; i < WARMUP; i++) await request(server, server.keys[1 + (i % (server.keys.length - 1))]!);
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const before = await settledTotals(server);
      const times = samples.get(server.stores)!;
      for (let i = 0; i < BATCH; i++) {
        const { status, micros } = await request(server, server.keys[1 + ((n++ * 7919) % (server.keys.length - 1))]!);
        if (status !== 200) non200.set(server.stores, non200.get(server.stores)! + 1);
        times.push(micros);
      }
      counted.set(server.stores, plus(counted.get(server.stores)!, minus(await settledTotals(server), before)));
    }
  }
  const floor = [...samples.get('memory')!].sort((a, b) => a - b);
  return servers.map((server) => {
    const sorted = [...samples.get(server.stores)!].sort((a, b) => a - b);
    const total = counted.get(server.stores)!;
    const requests = sorted.length;
    return {
      stores: server.stores,
      label: STORE_LABELS[server.stores],
      requests,
      non200: non200.get(server.stores)!,
      p50Micros: percentile(sorted, 0.5),
      p99Micros: percentile(sorted, 0.99),
      addedP50Micros: percentile(sorted, 0.5) - percentile(floor, 0.5),
      addedP99Micros: percentile(sorted, 0.99) - percentile(floor, 0.99),
      redisCallsPerRequest: total.calls / requests,
      redisUsecPerRequest: total.usec / requests,
      redisCpuMicrosPerRequest: total.cpuMicros / requests,
    };
  });
}

interface LoadResult {
  requests: number;
  non2xx: number;
  total: number;
  errors: number;
}

async function hammer(server: Server): Promise<HammerRow> {
  const key = server.keys[0]!;
  // Its one request an hour, then its first refusal: the one a shared store must answer.
  await request(server, key);
  const first = await request(server, key);
  if (first.status !== 429) throw new Error(`the hammer's key was not refused (${first.status}) on ${server.stores}`);
  const options = join(TMP, `capacity-hammer-${server.stores}.json`);
  writeFileSync(
    options,
    JSON.stringify({
      url: `http://127.0.0.1:${server.port}`,
      connections: HAMMER_CONNECTIONS,
      ...(SMOKE ? { amount: 50 } : { duration: HAMMER_SECONDS }),
      keys: [key],
      paths: ['/api/orders'],
    }),
  );
  const redisBefore = await settledTotals(server);
  const cpuBefore = await serverCpuMicros(server);
  const load = spawn(process.execPath, [join(here, 'http', 'load.mjs'), options], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  load.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => load.once('close', resolve));
  const result = JSON.parse(out) as LoadResult;
  const cpuAfter = await serverCpuMicros(server);
  const redis = minus(await settledTotals(server), redisBefore);
  // Every request of the run: the stats request itself is not counted by the server.
  const refused = cpuAfter.served - cpuBefore.served;
  return {
    stores: server.stores,
    label: STORE_LABELS[server.stores],
    refused: result.non2xx,
    other: result.total - result.non2xx + result.errors,
    refusedPerSecond: result.requests,
    redisCalls: redis.calls,
    redisCallsPerRefusal: redis.calls / Math.max(1, result.non2xx),
    redisUsecPerRefusal: redis.usec / Math.max(1, result.non2xx),
    redisCpuMicrosPerRefusal: redis.cpuMicros / Math.max(1, result.non2xx),
    serverCpuMicrosPerRefusal: (cpuAfter.cpu - cpuBefore.cpu) / Math.max(1, refused),
  };
}

export async function httpCases(): Promise<{ latency: LatencyRow[]; hammer: HammerRow[]; settings: Record<string, number> }> {
  const servers: Server[] = [];
  try {
    for (const stores of STORES) servers.push(await startServer(stores));
    const latencyRows = await latency(servers);
    const hammerRows: HammerRow[] = [];
    for (const server of servers) hammerRows.push(await hammer(server));
    return {
      latency: latencyRows,
      hammer: hammerRows,
      settings: { rounds: ROUNDS, batch: BATCH, warmup: WARMUP, keys: servers[0]!.keys.length, hammerSeconds: HAMMER_SECONDS, hammerConnections: HAMMER_CONNECTIONS },
    };
  } finally {
    for (const server of servers) {
      server.agent.destroy();
      server.child.kill('SIGTERM');
      server.redis?.disconnect();
      server.redisChild?.kill('SIGKILL');
    }
  }
}
