/**
 * In-process cost per request on every adapter, no sockets: each request is injected into
 * the request listener the HTTP benchmark serves (`http/stacks.ts`), as node:http's own
 * IncomingMessage and ServerResponse over a stub socket that swallows writes
 * (`http/inject.ts`), so each framework reads and writes headers as when served, without
 * the kernel and the load generator. Per adapter: the bare framework, the peer stack a
 * user would pick instead where one exists (Express: passport-headerapikey +
 * express-rate-limit; Fastify: @fastify/bearer-auth + @fastify/rate-limit; Hono:
 * hono/bearer-auth + hono-rate-limiter), and keyset's full stack (apiKey + per-key GCRA +
 * paginate + sendPage).
 *
 * Each stack runs in a process of its own, as when served (one framework's object shapes
 * never make another's code polymorphic), and the stacks run interleaved: every round
 * asks each process in turn for a batch (the others wait, idle), in an order that
 * reverses every other round; a stack's figure is the median over rounds of
 * (its CPU µs/request − its bare framework's CPU µs/request in that round), and
 * `× bare` the median of (bare µs / stack µs), the throughput ratio the HTTP benchmark
 * reports. CPU time (`process.cpuUsage()`), so other processes on a shared machine do not
 * count. Traffic rotates through BENCH_KEYS (10,000) keys and more than 500 distinct
 * valid cursors per stack, as in the HTTP benchmark.
 *
 * Env: BENCH_ROUNDS (21), BENCH_BATCH (2000 requests per stack per round), BENCH_KEYS,
 * BENCH_ADAPTERS (comma-separated subset of express,fastify,fetch,hono). Smoke mode
 * (BENCH_SMOKE=1): one round of 20 requests per stack, 50 keys, 3 pages per filter.
 *
 * Run: npx -y pnpm@10.34.9 bench inprocess-adapters
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject, type Listener } from './http/inject.ts';
import { KEY_COUNT } from './http/orders.ts';
import { build } from './http/stacks.ts';
import { save, setting, SMOKE } from './support.ts';

const ROUNDS = setting('BENCH_ROUNDS', 21, 1);
const BATCH = setting('BENCH_BATCH', 2000, 20);
const PAGES = setting('BENCH_PAGES', 250, 3);
const FILTERS = ['', 'status=paid&', 'status=refunded&'];
const CHILD = process.env.KEYSET_INPROCESS_STACK;

/** Per adapter: the bare framework first, then the stacks measured over it. */
const ADAPTERS: Record<string, { name: string; stack: string }[]> = {
  express: [
    { name: 'bare', stack: 'express' },
    { name: 'peer', stack: 'express-peer' },
    { name: 'keyset', stack: 'express-keyset' },
  ],
  fastify: [
    { name: 'bare', stack: 'fastify' },
    { name: 'peer', stack: 'fastify-peer' },
    { name: 'keyset', stack: 'fastify-keyset' },
  ],
  fetch: [
    { name: 'bare', stack: 'fetch' },
    { name: 'keyset', stack: 'fetch-keyset' },
  ],
  hono: [
    { name: 'bare', stack: 'hono' },
    { name: 'peer', stack: 'hono-peer' },
    { name: 'keyset', stack: 'hono-keyset' },
  ],
};
const wanted = (process.env.BENCH_ADAPTERS ?? Object.keys(ADAPTERS).join(',')).split(',');

/** CPU time (user + system) of this process in µs: unlike wall time, it does not grow while other processes hold the CPU. */
function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * One stack in a process of its own, driven by the parent: builds the stack, walks its
 * pages with its own cursors (≥ 500 of them), warms every key, says `ready`, then times a
 * batch whenever asked and answers with its CPU µs per request.
 */
async function child(stackName: string): Promise<void> {
  const { listener, keys } = (await build(stackName)) as { listener: Listener; keys: string[] };
  const paths: string[] = [];
  for (const filter of FILTERS) {
    let path = `/api/orders?${filter}limit=20`;
    for (let page = 0; page < PAGES; page++) {
      paths.push(path);
      const sent = await inject(listener, path, keys[0]!, true);
      if (sent.status !== 200) throw new Error(`${stackName} ${path} → ${sent.status} ${sent.body}`);
      const next = (JSON.parse(sent.body) as { nextCursor: string | null }).nextCursor;
      if (next === null) break;
      path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(next)}`;
    }
  }
  if (paths.length < 500 && !SMOKE) throw new Error(`${stackName}: only ${paths.length} cursors`);
  // Warm every key (verification cache, rate-limit entries) and the JIT.
  for (let i = 0; i < keys.length; i++) await inject(listener, paths[i % paths.length]!, keys[i]!);
  let counter = 0;
  process.on('message', async (batch: number) => {
    const start = cpuNow();
    for (let n = 0; n < batch; n++) {
      const i = counter++;
      const sent = await inject(listener, paths[i % paths.length]!, keys[(i * 7919) % keys.length]!);
      if (sent.status !== 200) throw new Error(`${stackName}: ${sent.status}`);
    }
    process.send!((cpuNow() - start) / batch);
  });
  process.send!({ ready: paths.length });
}

interface Stack {
  name: string;
  bare: string;
  process: ChildProcess;
  cursors: number;
}

/** Sends `message` to the stack's process and resolves with its next answer. */
function ask<T>(process: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a stack's process exited (${code})`));
    process.once('exit', onExit);
    process.once('message', (answer) => {
      process.off('exit', onExit);
      resolve(answer as T);
    });
    if (message !== undefined) process.send(message as string);
  });
}

async function parent(): Promise<void> {
  const stacks: Stack[] = [];
  // One process per stack, started together: setup is not measured.
  const starting = wanted.flatMap((adapter) => {
    const entries = ADAPTERS[adapter];
    if (entries === undefined) throw new Error(`unknown adapter ${adapter} (have ${Object.keys(ADAPTERS).join(', ')})`);
    return entries.map(async ({ name, stack: stackName }) => {
      const proc = fork(fileURLToPath(import.meta.url), [], {
        execArgv: process.execArgv,
        env: { ...process.env, KEYSET_INPROCESS_STACK: stackName },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const { ready } = await ask<{ ready: number }>(proc, undefined);
      return { name: `${adapter} ${name}`, bare: `${adapter} bare`, process: proc, cursors: ready };
    });
  });
  stacks.push(...(await Promise.all(starting)));

  const perRound: Record<string, number[]> = {};
  const overBare: Record<string, number[]> = {};
  const ratio: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? stacks : [...stacks].reverse();
    const times: Record<string, number> = {};
    // One stack at a time: the others wait on their IPC channel and use no CPU meanwhile.
    for (const s of order) times[s.name] = await ask<number>(s.process, BATCH);
    for (const s of stacks) {
      (perRound[s.name] ??= []).push(times[s.name]!);
      (overBare[s.name] ??= []).push(times[s.name]! - times[s.bare]!);
      (ratio[s.name] ??= []).push(times[s.bare]! / times[s.name]!);
    }
  }
  for (const s of stacks) s.process.kill();

  const median = (xs: number[]): number => {
    const sorted = [...xs].sort((a, b) => a - b);
    const m = sorted.length >> 1;
    return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
  };
  const spread = (xs: number[]): string => {
    const sorted = [...xs].sort((a, b) => a - b);
    return `${sorted[Math.floor(sorted.length / 4)]!.toFixed(1)}–${sorted[Math.floor((3 * sorted.length) / 4)]!.toFixed(1)}`;
  };
  const rows = stacks.map((s) => ({
    stack: s.name,
    'µs/req': Number(median(perRound[s.name]!).toFixed(2)),
    'µs over bare': Number(median(overBare[s.name]!).toFixed(2)),
    'over bare, interquartile': spread(overBare[s.name]!),
    '× bare': Number(median(ratio[s.name]!).toFixed(3)),
  }));
  console.table(rows);
  save('inprocess-adapters', { rounds: ROUNDS, batch: BATCH, keys: KEY_COUNT, cursors: Object.fromEntries(stacks.map((s) => [s.name, s.cursors])), rows });
}

if (CHILD !== undefined) await child(CHILD);
else await parent();
