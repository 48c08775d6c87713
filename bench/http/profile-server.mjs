#!/usr/bin/env node
// On-CPU profile (or GC trace, or listener count) of one HTTP benchmark server under load,
// as `bench http` serves it: the bundled server (`.bench-tmp/http-server.mjs`, which
// `bench http` writes) in its own process, autocannon in another, the same walk of pages
// and rotation of keys. `perf record` attaches after the warm-up, for the measured
// seconds only, so key issuance and JIT warm-up stay out of the profile.
//   node bench/http/profile-server.mjs <stack> [seconds=8] [perf|gc|count]
// perf: writes .bench-tmp/<stack>.perf; read it with bench/http/perf-by-module.mjs.
// gc: the server runs with --trace-gc; prints scavenges, pauses and heap in the window.
// count: timers and listeners added per request (EventEmitter on/once, setTimeout…).
// Prints the server's CPU µs per request in the window, and one page's header and body bytes.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tmp = join(here, '..', '..', '.bench-tmp');
const [stack = 'hono-keyset', secondsText = '8', mode = 'none'] = process.argv.slice(2);
const seconds = Number(secondsText);
const server = process.env.SERVER ?? join(tmp, 'http-server.mjs');
const keysFile = join(tmp, `profile-keys-${stack}.txt`);
const logFile = join(tmp, `profile-stdout-${stack}.log`);
const countFile = join(tmp, `profile-count-${stack}.json`);
const flags = { perf: ['--perf-basic-prof'], gc: ['--trace-gc'], count: ['--import', join(here, 'count-listeners.mjs')] }[mode] ?? [];
const child = spawn(process.execPath, [...flags, server, stack, keysFile], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, NODE_ENV: 'production', COUNT_OUT: countFile },
});
const log = createWriteStream(logFile);
child.stdout.on('data', (chunk) => log.write(chunk));
const port = await new Promise((resolve, reject) => {
  let text = '';
  const onData = (chunk) => {
    text += chunk;
    const m = /READY (\d+)/.exec(text);
    if (m) {
      child.stdout.off('data', onData);
      resolve(Number(m[1]));
    }
  };
  child.stdout.on('data', onData);
  child.once('exit', (code) => reject(new Error(`${stack} server exited with ${code}`)));
});
const keys = readFileSync(keysFile, 'utf8').split('\n');
const get = (path, key) => fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `ApiKey ${key}` } });
const paths = [];
for (const filter of ['', 'status=paid&', 'status=refunded&']) {
  let path = `/api/orders?${filter}limit=20`;
  for (let page = 0; page < 250; page++) {
    paths.push(path);
    const body = await (await get(path, keys[0])).json();
    if (body.nextCursor === null) break;
    path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(body.nextCursor)}`;
  }
}
const page = await get(paths[1], keys[1]);
const bodyBytes = Buffer.byteLength(await page.text());
let headerBytes = 0;
for (const [name, value] of page.headers) headerBytes += name.length + 2 + Buffer.byteLength(value) + 2;

async function load(duration) {
  const file = join(tmp, `profile-load-${stack}.json`);
  writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${port}`, connections: 32, duration, keys, paths }));
  const run = spawn(process.execPath, [join(here, 'load.mjs'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  run.stdout.on('data', (chunk) => (out += chunk));
  await new Promise((resolve) => run.once('close', resolve));
  return JSON.parse(out);
}
const stats = async () => (await fetch(`http://127.0.0.1:${port}/__bench/stats`)).json();

await load(3); // warm-up: JIT tiers, every key verified once
const before = await stats();
const logStart = statSync(logFile).size;
if (mode === 'count') child.kill('SIGUSR2');
const perf = mode === 'perf'
  ? spawn('perf', ['record', '-F', '999', '-g', '-p', String(child.pid), '-o', join(tmp, `${stack}.perf`), '--', 'sleep', String(Math.max(1, seconds - 1))], { stdio: 'ignore' })
  : undefined;
const result = await load(seconds);
if (perf && perf.exitCode === null) await new Promise((resolve) => perf.once('close', resolve));
if (mode === 'count') child.kill('SIGUSR2');
const after = await stats();
await new Promise((resolve) => setTimeout(resolve, 300));
const served = after.served - before.served;
const per = (n) => (n / served).toFixed(1);
console.log(
  `${stack}: ${Math.round(result.requests)} req/s, ${per(after.user + after.system - before.user - before.system)} CPU µs/request ` +
    `(user ${per(after.user - before.user)}, system ${per(after.system - before.system)}), ${served} requests; page ${headerBytes} header + ${bodyBytes} body bytes`,
);
if (mode === 'gc') {
  const trace = readFileSync(logFile, 'utf8').slice(logStart);
  const scavenges = trace.match(/Scavenge/g)?.length ?? 0;
  const marks = trace.match(/Mark-Compact/g)?.length ?? 0;
  const pauseMs = [...trace.matchAll(/, ([\d.]+) \/ [\d.]+ ms/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  const heap = [...trace.matchAll(/-> ([\d.]+) \(/g)].map((m) => Number(m[1]));
  console.log(`  gc: ${scavenges} scavenges (${(served / Math.max(1, scavenges)).toFixed(0)} requests each), ${marks} mark-compacts, ${((pauseMs * 1000) / served).toFixed(2)} µs of pauses a request, heap after GC ${heap[0]} → ${heap.at(-1)} MB`);
}
if (mode === 'count') {
  const counts = JSON.parse(readFileSync(countFile, 'utf8'));
  console.log(`  per request: ${Object.entries(counts).map(([name, n]) => `${name} ${per(n)}`).join(', ')}`);
}
child.kill('SIGTERM');
await new Promise((resolve) => child.once('close', resolve));
