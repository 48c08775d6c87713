/**
 * HTTP throughput of GET /api/orders (20 items, next cursor) through bare frameworks,
 * keyset's full stack (apiKey with warm cache + per-key GCRA memory limiter + signed
 * cursor paginate) and the peer stacks, on loopback. Each server runs in its own
 * process and the load generator (autocannon) in another. Servers alternate
 * A/B/A/B over several rounds; we report medians and per-round ratios to the bare
 * framework of the same round.
 *
 * Env: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_CONNECTIONS (32).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleServer } from './http/bundle.ts';
import { save } from './support.ts';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const ALL_STACKS = ['node', 'hono', 'hono-keyset', 'hono-peer', 'express', 'express-keyset', 'express-peer'] as const;
type Stack = (typeof ALL_STACKS)[number];
// BENCH_STACKS=hono,hono-keyset runs a subset (each stack's bare framework is added).
const wanted = process.env.BENCH_STACKS?.split(',') as Stack[] | undefined;
const STACKS: readonly Stack[] = wanted ? ALL_STACKS.filter((s) => wanted.includes(s) || wanted.some((w) => BARE_OF(w) === s)) : ALL_STACKS;
function BARE_OF(stack: Stack): Stack {
  return stack.startsWith('hono') ? 'hono' : stack.startsWith('express') ? 'express' : 'node';
}

const serverFile = await bundleServer(join(here, 'http', 'server.ts'), 'http-server.mjs');

async function start(stack: Stack): Promise<{ child: ChildProcess; port: number; key: string }> {
  const child = spawn(process.execPath, [serverFile, stack], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\d+) (\S+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), key: m[2]! });
    });
    child.once('exit', (code) => reject(new Error(`${stack} server exited with ${code}`)));
  });
}

async function targetUrl(port: number, key: string): Promise<string> {
  // Follow a few pages so the measured request carries a real cursor of that stack.
  let url = `http://127.0.0.1:${port}/api/orders?limit=20`;
  for (let i = 0; i < 3; i++) {
    const res = await fetch(url, { headers: { authorization: `ApiKey ${key}` } });
    if (!res.ok) throw new Error(`${url} → ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { nextCursor: string };
    url = `http://127.0.0.1:${port}/api/orders?limit=20&cursor=${encodeURIComponent(body.nextCursor)}`;
  }
  return url;
}

function load(url: string, key: string, seconds: number): { requests: number; latencyP99: number; non2xx: number; errors: number } {
  const run = spawnSync(
    process.execPath,
    [join(here, 'http', 'load.mjs'), JSON.stringify({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `ApiKey ${key}` } })],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const results: Record<string, number[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
const ratios: Record<string, number[]> = Object.fromEntries(STACKS.map((s) => [s, []]));
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order every round so drift (thermal, other load) hits every stack alike.
  const order = round % 2 === 0 ? STACKS : [...STACKS].reverse();
  const roundRps: Partial<Record<Stack, number>> = {};
  for (const stack of order as readonly Stack[]) {
    const { child, port, key } = await start(stack);
    try {
      const url = await targetUrl(port, key);
      load(url, key, 1); // warm-up: JIT, caches
      const r = load(url, key, SECONDS);
      if (r.non2xx || r.errors) throw new Error(`${stack}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      roundRps[stack] = r.requests;
      results[stack]!.push(r.requests);
      console.log(`round ${round + 1} ${stack.padEnd(15)} ${Math.round(r.requests).toLocaleString('en-US').padStart(8)} req/s  p99 ${r.latencyP99} ms`);
    } finally {
      child.kill('SIGTERM');
    }
  }
  for (const stack of STACKS) ratios[stack]!.push(roundRps[stack]! / roundRps[BARE_OF(stack)]!);
}

const table = STACKS.map((stack) => ({
  stack,
  'median req/s': Math.round(median(results[stack]!)),
  'x bare (median of rounds)': Number(median(ratios[stack]!).toFixed(3)),
  'x bare per round': ratios[stack]!.map((r) => r.toFixed(3)).join(' '),
}));
console.table(table);
save('http', { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, table, raw: results });
