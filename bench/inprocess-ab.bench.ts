/**
 * A same-process A/B of two versions of keyset: the built packages of a base checkout
 * (BENCH_BASE_DIR, its `packages/{core,hono}/dist` loaded by absolute path) and of this
 * checkout (`packages/{core,hono}/dist`, as the workspace builds them) side by side, each
 * making keyset's three Hono stacks of `bench/http/keyset-stacks.ts` (auth only,
 * pagination only, full stack) behind `@hono/node-server`'s listener, plus one bare Hono.
 * Interleaved rounds (order reversed every other round) of BENCH_BATCH requests each,
 * rotating through BENCH_KEYS keys and ~600 cursors; the figure is the median over rounds
 * of (head − base) CPU µs per request (`process.cpuUsage()`), and each side over bare Hono.
 * Separate processes of `bench inprocess` swing by several µs on a shared machine; one
 * process with both builds does not.
 *
 * Both sides run built JavaScript (rebuild this checkout after a source change:
 * `npx -y pnpm@10.34.9 --filter @keyset/core --filter @keyset/hono build`). Run it with
 * TSX_TSCONFIG_PATH=tsconfig.base.json (no `paths`): tsconfig.json's paths would send the
 * base build's own `@keyset/core` imports to this checkout's sources.
 *
 * Env: BENCH_BASE_DIR (the base checkout, installed and built; default ../baseline),
 * BENCH_ROUNDS (21), BENCH_BATCH (4000), BENCH_KEYS (10,000), BENCH_STACKS (comma list of
 * auth,pagination,full; all by default). Smoke mode (BENCH_SMOKE=1): this checkout's
 * sources on both sides, one round of 20 requests per stack.
 */
import { existsSync } from 'node:fs';
import { Hono } from 'hono';
import { resolve } from 'node:path';
import { keysetHono, load } from './http/ab-stacks.ts';
import { stackTimer, warmStack, type Stack } from './http/fake-node.ts';
import { KEY_COUNT, plainPage, statusOf } from './http/orders.ts';
import { save, setting, SMOKE } from './support.ts';

const here = new URL('.', import.meta.url).pathname;
const HEAD_DIR = resolve(here, '..');
// Smoke mode compares this checkout's sources with themselves: it needs no second checkout and no build.
const BASE_DIR = resolve(process.env.BENCH_BASE_DIR ?? (SMOKE ? HEAD_DIR : resolve(here, '../../baseline')));
const ENTRY = SMOKE ? 'src/index.ts' : 'dist/index.js';
const ROUNDS = setting('BENCH_ROUNDS', 21, 1);
const BATCH = setting('BENCH_BATCH', 4000, 20);
const PAGES = setting('BENCH_PAGES', 250, 3);
const WANTED = (process.env.BENCH_STACKS ?? 'auth,pagination,full').split(',');

const KINDS = [
  ['auth', 'auth only', { auth: true, paginate: false }],
  ['pagination', 'pagination only', { auth: false, paginate: true }],
  ['full', 'full stack', { auth: true, paginate: true }],
] as const;
const kinds = KINDS.filter(([id]) => WANTED.includes(id));

if (!existsSync(resolve(BASE_DIR, `packages/hono/${ENTRY}`))) {
  // `pnpm bench` runs every benchmark; this one needs a base checkout beside this one.
  console.log(`skipped: no built checkout at ${BASE_DIR} (BENCH_BASE_DIR; see docs/benchmarks.md, "Same-process A/B")`);
  process.exit(0);
}
const builds = { base: await load(BASE_DIR, ENTRY), head: await load(HEAD_DIR, ENTRY) };
const stacks: Stack[] = [];
{
  const bare = new Hono();
  bare.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  stacks.push(await warmStack('bare', bare, Array.from({ length: KEY_COUNT }, (_, i) => `unchecked-${i}`), PAGES));
}
for (const [, label, parts] of kinds) {
  for (const side of ['base', 'head'] as const) {
    const { app, keys } = await keysetHono(builds[side], parts);
    stacks.push(await warmStack(`${side} ${label}`, app, keys, PAGES));
  }
}

const timeStack = stackTimer(BATCH);

const times: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  // No forced collection between batches: its concurrent sweeping runs on other threads,
  // whose CPU time process.cpuUsage() counts, into the next batch.
  for (const s of round % 2 === 0 ? stacks : [...stacks].reverse()) (times[s.name] ??= []).push(await timeStack(s));
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const quartiles = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length / 4)]!.toFixed(2)}..${s[Math.floor((3 * s.length) / 4)]!.toFixed(2)}`;
};
const per = (name: string, minus: string) => times[name]!.map((t, i) => t - times[minus]![i]!);
const rows = kinds.map(([, label]) => {
  const diff = per(`head ${label}`, `base ${label}`);
  return {
    stack: label,
    'base over bare': Number(median(per(`base ${label}`, 'bare')).toFixed(2)),
    'head over bare': Number(median(per(`head ${label}`, 'bare')).toFixed(2)),
    'head − base': Number(median(diff).toFixed(2)),
    'head − base IQR': quartiles(diff),
  };
});
console.log(`bare Hono ${median(times.bare!).toFixed(2)} CPU µs/request; base ${BASE_DIR}`);
console.table(rows);
save('inprocess-ab', { rounds: ROUNDS, batch: BATCH, keys: KEY_COUNT, base: BASE_DIR, bare: median(times.bare!), rows });
