/**
 * Memory under a flood of unknown keys: 1M distinct, well-formed (valid checksum) but
 * unknown API keys hit keyset's Hono stack over loopback, its per-address budget of refused
 * keys off (a flood from many addresses gets past it). Every one passes the checksum,
 * misses the cache, misses the store and is cached as negative, so an unbounded cache
 * would grow by ~1M entries. RSS of the server process is sampled as the flood goes on;
 * it must stay flat once the bounded caches are full.
 *
 * Env: BENCH_KEYS (1_000_000), BENCH_CONNECTIONS (32). Smoke mode (BENCH_SMOKE=1): 400 keys.
 *
 * Run: npx -y pnpm@10.34.9 bench memory
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKey } from '@keyset/core';
import { save, setting } from './support.ts';

const here = dirname(fileURLToPath(import.meta.url));
const TOTAL = setting('BENCH_KEYS', 1_000_000, 400);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 32, 4);

const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'http', 'server.ts'), 'hono-keyset-no-budget'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, NODE_ENV: 'production' },
});
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    const m = /READY (\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
  child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});

function rssMiB(): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
function hit(key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/api/orders?limit=20', agent, headers: { authorization: `ApiKey ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const samples: { requests: number; rssMiB: number }[] = [{ requests: 0, rssMiB: rssMiB() }];
let sent = 0;
let non401 = 0;
const started = performance.now();
const step = Math.max(1, Math.floor(TOTAL / 20));
async function worker(): Promise<void> {
  while (sent < TOTAL) {
    const n = ++sent;
    const status = await hit(generateKey('bench_live'));
    if (status !== 401) non401++;
    if (n % step === 0) {
      samples.push({ requests: n, rssMiB: rssMiB() });
      console.log(`${String(sent).padStart(8)} unknown keys  RSS ${samples.at(-1)!.rssMiB.toFixed(1)} MiB`);
    }
  }
}
await Promise.all(Array.from({ length: CONNECTIONS }, worker));
const seconds = (performance.now() - started) / 1000;
child.kill('SIGTERM');
agent.destroy();

// "Flat": growth over the second half of the flood, when every cache is long full.
samples.sort((a, b) => a.requests - b.requests);
const half = samples.find((s) => s.requests >= TOTAL / 2) ?? samples[0]!;
const last = samples.at(-1)!;
const summary = {
  keys: TOTAL,
  seconds: Number(seconds.toFixed(1)),
  requestsPerSecond: Math.round(TOTAL / seconds),
  non401,
  rssStartMiB: Number(samples[0]!.rssMiB.toFixed(1)),
  rssHalfMiB: Number(half.rssMiB.toFixed(1)),
  rssEndMiB: Number(last.rssMiB.toFixed(1)),
  rssPeakMiB: Number(Math.max(...samples.map((s) => s.rssMiB)).toFixed(1)),
  growthSecondHalfMiB: Number((last.rssMiB - half.rssMiB).toFixed(1)),
};
console.table([summary]);
save('memory', { summary, samples });
if (non401) {
  console.error(`${non401} responses were not 401`);
  process.exitCode = 1;
}
