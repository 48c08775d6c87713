#!/usr/bin/env node
// Per-request on-CPU breakdown of a `perf record -g` file of a bundled benchmark server
// (bench/http/profile-server.mjs … perf): each sample of the main thread is charged to the
// first frame, leaf upwards, that names something: the kernel, GC, the JIT compiler, JSON,
// hashing, the HTTP parser, a module of the bundle (esbuild's `// path` comments mark where
// each module starts, so `http-server.mjs:LINE` maps back to a package's dist file), a
// node: internal module or an npm package. Builtins and runtime calls go to the JavaScript
// that called them. Samples of other threads (GC helpers, the compiler) are counted apart.
//   node bench/http/perf-by-module.mjs <perf.data> <CPU µs/request> [bundle]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [file, perRequestText, bundle = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.bench-tmp', 'http-server.mjs')] = process.argv.slice(2);
const perRequest = Number(perRequestText);
if (!file || !Number.isFinite(perRequest)) {
  console.error('usage: node bench/http/perf-by-module.mjs <perf.data> <CPU µs/request> [bundle]');
  process.exit(2);
}
const starts = [];
readFileSync(bundle, 'utf8').split('\n').forEach((line, i) => {
  const m = /^\/\/ ((?:packages|bench|node_modules)\/\S+)$/.exec(line);
  if (m) starts.push([i + 1, m[1]]);
});
function moduleAt(line) {
  let lo = 0;
  let hi = starts.length - 1;
  let found = 'bundle';
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid][0] <= line) {
      found = starts[mid][1];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  let m;
  if ((m = /^packages\/(\w+)\/dist\/([\w-]+)\//.exec(found))) return `keyset ${m[1]}/${m[2]}`;
  if ((m = /^packages\/(\w+)\/dist\//.exec(found))) return `keyset ${m[1]}`;
  return found;
}
const rules = [
  ['kernel (syscalls, scheduling)', (f) => f.includes('[kernel.kallsyms]')],
  ['garbage collection', (f) => /Scaveng|Heap::|MarkCompact|Sweep|Marking|Evacuat|GCTracer|Ephemeron|RememberedSet|MemoryAllocator|GlobalHandles/.test(f)],
  ['JIT compiler', (f) => /compiler::|Compiler::|OptimizedCompilationJob|Deoptimizer|Parser::Parse|Bytecode/.test(f)],
  ['JSON.stringify / JSON.parse', (f) => /Json(Stringifier|Parser)|JsonStringify|JsonParse/.test(f)],
  ['SHA-256 / HMAC (OpenSSL, node:crypto)', (f) => /sha256|SHA256|OPENSSL|EVP_|ossl_|node::crypto|node:internal\/crypto/.test(f)],
  ['HTTP parser (llhttp)', (f) => /llhttp/.test(f)],
];
const script = execFileSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
const blocks = script.split('\n\n').map((b) => b.split('\n').filter(Boolean)).filter((b) => b.length > 0);
const perThread = new Map();
for (const b of blocks) perThread.set(b[0].trim(), (perThread.get(b[0].trim()) ?? 0) + 1);
const mainThread = [...perThread].sort((a, b) => b[1] - a[1])[0][0];
const totals = new Map();
for (const [tid, ...frames] of blocks) {
  let bucket;
  if (tid.trim() !== mainThread) bucket = 'other threads (GC helpers, compiler)';
  else {
    for (const frame of frames) {
      const rule = rules.find(([, test]) => test(frame));
      if (rule) {
        bucket = rule[0];
        break;
      }
      let m;
      if ((m = /\.bench-tmp\/[\w-]+\.mjs:(\d+)/.exec(frame))) {
        bucket = moduleAt(Number(m[1]));
        break;
      }
      if ((m = /JS:\S* (node:[\w/]+)/.exec(frame))) {
        bucket = m[1];
        break;
      }
      if ((m = /node_modules\/\.pnpm\/(@?[^@/]+)@/.exec(frame))) {
        bucket = `npm ${m[1].replace('+', '/')}`;
        break;
      }
    }
    bucket ??= 'V8 / Node runtime (event loop, microtasks)';
  }
  totals.set(bucket, (totals.get(bucket) ?? 0) + 1);
}
console.log('| where the CPU time goes | share | µs/request |\n|---|---:|---:|');
for (const [name, n] of [...totals].sort((a, b) => b[1] - a[1])) {
  if (n / blocks.length >= 0.004) console.log(`| ${name} | ${((n / blocks.length) * 100).toFixed(1)} % | ${((n / blocks.length) * perRequest).toFixed(2)} |`);
}
console.log(`| **total** (${blocks.length} samples; rows under 0.4 % left out) | 100 % | ${perRequest.toFixed(1)} |`);
