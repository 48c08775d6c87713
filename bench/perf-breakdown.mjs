#!/usr/bin/env node
// Per-request on-CPU breakdown from a `perf record -g` file of bench/profile-driver.ts or
// bench/profile-driver-adapters.ts
// (run with node --perf-basic-prof, so JIT frames have names). Each sample is charged to
// the first frame of its call chain, leaf upwards, that a rule below recognises: leaf
// work with a name of its own (JSON, hashing, GC, kernel) stays there, while V8 builtins
// and runtime calls (Map lookups, string building, promise jobs) go to the JavaScript
// that called them. Samples under key issuance (the driver's setup) are left out.
// Shares are scaled to µs per request with the CPU µs/request the driver printed.
//   node bench/perf-breakdown.mjs <perf.data> <cpu µs per request>
import { execFileSync } from 'node:child_process';

const [file, perRequestText] = process.argv.slice(2);
const perRequest = Number(perRequestText);
if (!file || !Number.isFinite(perRequest)) {
  console.error('usage: node bench/perf-breakdown.mjs <perf.data> <cpu µs per request>');
  process.exit(2);
}
const script = execFileSync('perf', ['script', '-i', file, '-F', 'ip,sym,dso'], {
  encoding: 'utf8',
  maxBuffer: 1024 * 1024 * 1024,
  stdio: ['ignore', 'pipe', 'ignore'],
});

/** [bucket, test on one frame line]; the first rule matching a frame, leaf upwards, wins. */
const rules = [
  ['kernel (syscalls, page faults, scheduling)', (f) => f.includes('[kernel.kallsyms]')],
  ['garbage collection', (f) => /Scaveng|Heap::|MarkCompact|Sweep|Marking|Evacuat|GCTracer|Ephemeron|RememberedSet|MemoryAllocator|GlobalHandles/.test(f)],
  ['JSON.stringify / JSON.parse', (f) => /Json(Stringifier|Parser)|JsonStringify|JsonParse/.test(f)],
  ['SHA-256 / HMAC (OpenSSL and node:crypto)', (f) => /sha256|SHA256|OPENSSL|EVP_|ossl_|node::crypto|node:internal\/crypto/.test(f)],
  ['keyset core: keys (query check, header, verifier, cache, scopes)', (f) => /packages\/core\/src\/(auth|keys|redaction)\//.test(f)],
  ['keyset core: rate limit (limiter, GCRA store, headers)', (f) => f.includes('packages/core/src/rate-limit/')],
  ['keyset core: pagination (query, plan, cursor codec, Link, sort values)', (f) => /packages\/core\/src\/(pagination|cursor|internal)\//.test(f)],
  ['keyset core: crypto provider', (f) => f.includes('packages/core/src/crypto/')],
  ['keyset Hono adapter (apiKey, paginate, sendPage)', (f) => f.includes('packages/hono/src/')],
  ['keyset Express adapter', (f) => f.includes('packages/express/src/')],
  ['keyset Fastify adapter', (f) => f.includes('packages/fastify/src/')],
  ['keyset Fetch adapter', (f) => f.includes('packages/fetch/src/')],
  ['peer middleware (passport, rate limiters, bearer auth)', (f) => /passport|rate-limit|bearer-auth|rateLimit|lodash/.test(f)],
  ['Express (router, req/res helpers, etag, send)', (f) => /node_modules\/\.pnpm\/(express|router|etag|send|finalhandler|qs|content-type|fresh|mime|on-finished|parseurl|type-is|accepts|negotiator)@/.test(f)],
  ['Fastify (hooks, routing, reply, light internals)', (f) => /node_modules\/\.pnpm\/(fastify|find-my-way|avvio|@fastify|fast-json-stringify|light-my-request|fast-querystring)/.test(f)],
  ['undici Headers / Response', (f) => f.includes('undici')],
  ['Hono (router, context, compose)', (f) => /\/hono\/dist\//.test(f) && !f.includes('node-server')],
  ['@hono/node-server (request/response translation)', (f) => f.includes('@hono/node-server') || f.includes('@hono+node-server')],
  ['benchmark data and driver (orders, pageAfter, fake socket)', (f) => /bench\/(http\/|profile-driver)/.test(f)],
  ['node:http (IncomingMessage, ServerResponse, head)', (f) => /node:_http|node:internal\/http|_http_(outgoing|server|incoming|common)/.test(f)],
];
const SETUP = /key-admin\.ts|\bissue\b/;

const totals = new Map(rules.map(([name]) => [name, 0]));
let other = 0;
let samples = 0;
let setup = 0;
for (const block of script.split('\n\n')) {
  const frames = block.split('\n').filter((l) => l.startsWith('\t') || l.startsWith(' '));
  if (frames.length === 0) continue;
  if (frames.some((f) => SETUP.test(f))) {
    setup++;
    continue;
  }
  samples++;
  let charged = false;
  for (const frame of frames) {
    const rule = rules.find(([, test]) => test(frame));
    if (rule) {
      totals.set(rule[0], totals.get(rule[0]) + 1);
      charged = true;
      break;
    }
  }
  if (!charged) other++;
}
const rows = [...totals, ['V8 / Node runtime not under any of the above (event loop, microtasks, compiler)', other]].sort((a, b) => b[1] - a[1]);
console.log(`| where the CPU time goes | share | µs/request |\n|---|---:|---:|`);
for (const [name, count] of rows) console.log(`| ${name} | ${((count / samples) * 100).toFixed(1)} % | ${((count / samples) * perRequest).toFixed(1)} |`);
console.log(`| **total** (${samples} samples; ${setup} setup samples left out) | 100 % | ${perRequest.toFixed(1)} |`);
