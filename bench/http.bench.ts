/**
 * HTTP cost of GET /api/orders (20 items, next cursor) through bare frameworks, keyset's
 * full stack (apiKey + per-key GCRA memory limiter + signed cursor paginate) and the peer
 * stacks, on loopback, with traffic shaped like production: every request rotates
 * through BENCH_KEYS (10,000) distinct API keys and through more than 500 distinct valid
 * cursors (three filters × many pages), so nothing that remembers one key or one cursor
 * can win.
 *
 * Each server runs in its own process, the load generator (autocannon) in another. Per
 * stack and round we report req/s and the server's CPU time per request
 * (`process.cpuUsage()` delta / requests served, read from the server itself), each as a
 * ratio to the bare framework of the same round; the order of stacks reverses every
 * other round; medians over rounds are reported.
 *
 * Env: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP (3 s), BENCH_CONNECTIONS (32), BENCH_KEYS (10000),
 * BENCH_PAGES (pages walked per filter, 250), BENCH_STACKS (comma list; each stack's
 * bare framework is added). Smoke mode (BENCH_SMOKE=1): one round of 200 requests per
 * stack over 4 connections, servers bundled from the sources.
 *
 * Run: npx -y pnpm@10.34.9 bench http
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleServer } from './http/bundle.ts';
import { save, setting, SMOKE, TMP as tmp } from './support.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = setting('BENCH_ROUNDS', 3, 1);
const SECONDS = setting('BENCH_SECONDS', 5, 1);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 32, 4);
const PAGES = setting('BENCH_PAGES', 250, 3);
// Warm-up per server before measuring: JIT tiers and the first use of every key. On a
// busy machine 1 s left keyset's larger code partly unoptimised and keys unverified.
const WARMUP = setting('BENCH_WARMUP', 3, 0);
// Smoke mode sends a fixed number of requests instead of loading for SECONDS.
const SMOKE_REQUESTS = 200;
const FILTERS = ['', 'status=paid&', 'status=refunded&'];

/** Every stack and the bare framework it is compared with. */
const ALL_STACKS = {
  node: 'node',
  hono: 'hono',
  'hono-keyset': 'hono',
  'hono-peer': 'hono',
  'hono-handrolled': 'hono',
  express: 'express',
  'express-keyset': 'express',
  'express-peer': 'express',
  fastify: 'fastify',
  'fastify-keyset': 'fastify',
  'fastify-peer': 'fastify',
  fetch: 'fetch',
  'fetch-keyset': 'fetch',
} as const satisfies Record<string, string>;
type Stack = keyof typeof ALL_STACKS;
const bareOf = (stack: Stack): Stack => ALL_STACKS[stack];

const wanted = process.env.BENCH_STACKS?.split(',');
const STACKS = (Object.keys(ALL_STACKS) as Stack[]).filter(
  (s) => wanted === undefined || wanted.includes(s) || wanted.some((w) => w in ALL_STACKS && bareOf(w as Stack) === s),
);

const serverFile = await bundleServer(join(here, 'http', 'server.ts'), 'http-server.mjs');

async function start(stack: Stack): Promise<{ child: ChildProcess; port: number; keys: string[] }> {
  const keysFile = join(tmp, `keys-${stack}.txt`);
  const child = spawn(process.execPath, [serverFile, stack, keysFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), keys: readFileSync(keysFile, 'utf8').split('\n') });
    });
    child.once('exit', (code) => reject(new Error(`${stack} server exited with ${code}`)));
  });
}

/** Paths of the first PAGES pages of each filter, each page's cursor as this stack issued it. */
async function walk(port: number, key: string): Promise<string[]> {
  const paths: string[] = [];
  for (const filter of FILTERS) {
    let path = `/api/orders?${filter}limit=20`;
    for (let page = 0; page < PAGES; page++) {
      paths.push(path);
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `ApiKey ${key}` } });
      if (!res.ok) throw new Error(`${path} → ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { nextCursor: string | null };
      if (body.nextCursor === null) break;
      path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
  }
  return paths;
}

/**
 * One page's size as this stack sends it: header lines (`name: value` CRLF, as fetch()
 * reports them, the status line left out) and body bytes. Stacks do not send the same
 * bytes (keyset and the hand-rolled stack add `Link`, `RateLimit` and `RateLimit-Policy`
 * and a previous-page cursor), so the table shows what each one writes to its socket.
 */
async function pageBytes(port: number, key: string, path: string): Promise<{ header: number; body: number }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `ApiKey ${key}` } });
  const body = Buffer.byteLength(await res.text());
  let header = 0;
  for (const [name, value] of res.headers) header += name.length + 2 + Buffer.byteLength(value) + 2;
  return { header, body };
}

interface Stats {
  user: number;
  system: number;
  served: number;
}

async function stats(port: number): Promise<Stats> {
  return (await (await fetch(`http://127.0.0.1:${port}/__bench/stats`)).json()) as Stats;
}

async function load(port: number, keys: string[], paths: string[], seconds: number): Promise<{ requests: number; latencyP99: number; non2xx: number; errors: number }> {
  const file = join(tmp, `load-options-${port}.json`);
  const amount = SMOKE ? { amount: SMOKE_REQUESTS } : { duration: seconds };
  writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, ...amount, keys, paths }));
  const child = spawn(process.execPath, [join(here, 'http', 'load.mjs'), file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(stderr);
  return JSON.parse(stdout);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Sample {
  rps: number;
  cpuMicros: number;
}
const samples: Record<string, Sample[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
const rpsRatios: Record<string, number[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
const cpuRatios: Record<string, number[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
const cpuOver: Record<string, number[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
const distinct = { keys: 0, paths: 0 };
const bytes: Record<string, { header: number; body: number }> = {};

/** One stack's server, started, its pages walked, warmed up. */
async function prepare(stack: Stack): Promise<{ child: ChildProcess; port: number; keys: string[]; paths: string[] }> {
  const server = await start(stack);
  try {
    const paths = await walk(server.port, server.keys[0]!);
    // A page with a cursor (links both ways): the kind most of the traffic asks for.
    bytes[stack] ??= await pageBytes(server.port, server.keys[1] ?? server.keys[0]!, paths[1] ?? paths[0]!);
    distinct.keys = server.keys.length;
    distinct.paths = Math.min(distinct.paths || Infinity, paths.length);
    if (WARMUP > 0) await load(server.port, server.keys, paths, WARMUP); // warm-up: JIT, caches
    return { ...server, paths };
  } catch (error) {
    server.child.kill('SIGTERM');
    throw error;
  }
}

/** Loads one prepared stack for SECONDS and reads the server's CPU time around it. */
async function measure(stack: Stack, server: Awaited<ReturnType<typeof prepare>>, round: number): Promise<Sample> {
  const before = await stats(server.port);
  const r = await load(server.port, server.keys, server.paths, SECONDS);
  const after = await stats(server.port);
  if (r.non2xx || r.errors) throw new Error(`${stack}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const served = after.served - before.served;
  const cpuMicros = (after.user + after.system - before.user - before.system) / served;
  // The load average beside each figure: on a busy machine every stack's own work costs
  // several times what it costs on a calm one, and more so the more code it runs.
  console.log(
    `round ${round + 1} ${stack.padEnd(15)} ${Math.round(r.requests).toLocaleString('en-US').padStart(8)} req/s  ${cpuMicros.toFixed(1).padStart(6)} µs CPU/req  p99 ${r.latencyP99} ms  load ${loadavg()[0]!.toFixed(1)}`,
  );
  return { rps: r.requests, cpuMicros };
}

for (let round = 0; round < ROUNDS; round++) {
  // Reverse the order every other round so drift (other load on the machine) hits every stack alike.
  const order = round % 2 === 0 ? STACKS : [...STACKS].reverse();
  const inRound: Partial<Record<Stack, Sample>> = {};
  if (SMOKE) {
    // Smoke mode checks that every stack runs, not what it costs: all of them at once.
    const servers = await Promise.allSettled(order.map(prepare));
    try {
      const measured = await Promise.all(order.map((stack, i) => {
        const server = servers[i]!;
        if (server.status === 'rejected') throw server.reason;
        return measure(stack, server.value, round);
      }));
      order.forEach((stack, i) => (inRound[stack] = measured[i]!));
    } finally {
      for (const server of servers) if (server.status === 'fulfilled') server.value.child.kill('SIGTERM');
    }
  } else {
    for (const stack of order) {
      const server = await prepare(stack);
      try {
        inRound[stack] = await measure(stack, server, round);
      } finally {
        server.child.kill('SIGTERM');
      }
    }
  }
  for (const stack of STACKS) {
    const own = inRound[stack]!;
    samples[stack]!.push(own);
    const bare = inRound[bareOf(stack)]!;
    rpsRatios[stack]!.push(own.rps / bare.rps);
    cpuRatios[stack]!.push(bare.cpuMicros / own.cpuMicros);
    cpuOver[stack]!.push(own.cpuMicros - bare.cpuMicros);
  }
}

const table = STACKS.map((stack) => ({
  stack,
  'median req/s': Math.round(median(samples[stack]!.map((s) => s.rps))),
  'x bare req/s': Number(median(rpsRatios[stack]!).toFixed(3)),
  'CPU µs/req': Number(median(samples[stack]!.map((s) => s.cpuMicros)).toFixed(1)),
  'CPU µs over bare': Number(median(cpuOver[stack]!).toFixed(1)),
  'x bare CPU': Number(median(cpuRatios[stack]!).toFixed(3)),
  'x bare CPU per round': cpuRatios[stack]!.map((r) => r.toFixed(3)).join(' '),
  'header + body bytes': bytes[stack] === undefined ? '' : `${bytes[stack]!.header} + ${bytes[stack]!.body}`,
}));
console.table(table);
save('http', { rounds: ROUNDS, seconds: SECONDS, warmup: WARMUP, connections: CONNECTIONS, keys: distinct.keys, paths: distinct.paths, table, raw: samples });
