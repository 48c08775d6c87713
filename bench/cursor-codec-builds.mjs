#!/usr/bin/env node
// The cursor codec alone, two builds in one process: the built core of a base checkout
// (BENCH_BASE_DIR, default ../baseline beside this checkout) against this checkout's
// (`packages/core/dist`; rebuild after a source change). Each side's synchronous encode
// and decode (the twins the paginator calls) over 500 positions and their cursors,
// interleaved rounds (order flipped every round) of BENCH_BATCH calls, CPU time; prints
// the medians per call and the median of the per-round differences (this − base), in ns.
//   BENCH_BASE_DIR=../baseline node bench/cursor-codec-builds.mjs
// Env: BENCH_BASE_DIR, BENCH_ROUNDS (31), BENCH_BATCH (20,000).
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const dirs = { base: resolve(process.env.BENCH_BASE_DIR ?? resolve(here, '../../baseline')), head: resolve(here, '..') };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 31);
const BATCH = Number(process.env.BENCH_BATCH ?? 20_000);
const MAYBE_SYNC = Symbol.for('keyset.maybeSync');
const sortKeys = [
  { key: 'createdAt', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'int', unique: true },
];
const positions = Array.from({ length: 500 }, (_, i) => [new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace('Z', '123Z'), 10_000 - i]);

const sides = {};
for (const [side, dir] of Object.entries(dirs)) {
  const core = await import(pathToFileURL(resolve(dir, 'packages/core/dist/index.js')).href);
  const sort = core.defineSortSpec(sortKeys);
  const codec = core.createCursorCodec({ secrets: ['benchmark-cursor-secret-0123456789abcdef'] });
  const fingerprint = await core.cursorFingerprint({ endpoint: 'GET /api/orders', sort });
  const encode = codec.encode[MAYBE_SYNC];
  const decode = codec.decode[MAYBE_SYNC];
  const cursors = positions.map((p) => encode(p, fingerprint, sort));
  sides[side] = {
    encode: (i) => encode(positions[i % 500], fingerprint, sort),
    decode: (i) => decode(cursors[i % 500], fingerprint, sort),
  };
}

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const times = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 ? ['base', 'head'] : ['head', 'base']) {
    for (const op of ['encode', 'decode']) {
      const run = sides[side][op];
      const start = cpu();
      for (let i = 0; i < BATCH; i++) run(i);
      (times[`${side} ${op}`] ??= []).push(((cpu() - start) / BATCH) * 1000);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`base ${dirs.base}`);
for (const op of ['encode', 'decode']) {
  const diff = times[`head ${op}`].map((t, i) => t - times[`base ${op}`][i]);
  console.log(`${op}: base ${median(times[`base ${op}`]).toFixed(0)} ns, this ${median(times[`head ${op}`]).toFixed(0)} ns, this − base ${median(diff).toFixed(0)} ns`);
}
