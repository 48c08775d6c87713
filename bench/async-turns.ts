/**
 * Counts the promises each request makes on keyset's Hono stacks, for two builds side by
 * side: the built packages of a base checkout (BENCH_BASE_DIR, default ../baseline) and of
 * this checkout, each making the same three stacks as bench/inprocess-ab.bench.ts (auth
 * only, pagination only, full stack). Not a timing: an `async_hooks` hook counts every
 * promise created while `BENCH_REQUESTS` requests (100) go through a warmed stack. An
 * enabled hook makes V8 create promises it would otherwise skip for some awaits, so the
 * counts are an upper bound, the same on both sides; what differs between the sides is
 * what each build's code awaits.
 *
 *   TSX_TSCONFIG_PATH=tsconfig.base.json node --import tsx bench/async-turns.ts
 *
 * With `--sites` it also prints, for this checkout's full stack, where the promises are
 * made (the first frame outside Node's own code).
 */
import { createHook } from 'node:async_hooks';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { keysetHono, load } from './http/ab-stacks.ts';
import { FakeResponse, incoming, warmStack } from './http/fake-node.ts';

const here = new URL('.', import.meta.url).pathname;
const HEAD_DIR = resolve(here, '..');
const BASE_DIR = resolve(process.env.BENCH_BASE_DIR ?? resolve(here, '../../baseline'));
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const SITES = process.argv.includes('--sites');
const STACKS = [
  ['auth only', { auth: true, paginate: false }],
  ['pagination only', { auth: false, paginate: true }],
  ['full stack', { auth: true, paginate: true }],
] as const;

let counting = false;
let promises = 0;
const sites = new Map<string, number>();
const hook = createHook({
  init(_id, type) {
    if (!counting || type !== 'PROMISE') return;
    promises++;
    if (SITES) {
      const frame = new Error().stack?.split('\n').slice(1).find((line) => !line.includes('node:internal') && !line.includes('async-turns.ts')) ?? '?';
      const site = frame.trim().replace(`${HEAD_DIR}/`, '').replace(/node_modules\/\.pnpm\/\S*?\/node_modules\//, '');
      sites.set(site, (sites.get(site) ?? 0) + 1);
    }
  },
});

/** Promises per request through `parts` of `dir`'s build, after warming. */
async function promisesPerRequest(dir: string, parts: { auth: boolean; paginate: boolean }): Promise<number> {
  const { app, keys } = await keysetHono(await load(dir, 'dist/index.js'), parts);
  const stack = await warmStack(dir, app, keys.slice(0, 200), 5);
  sites.clear();
  promises = 0;
  hook.enable();
  counting = true;
  for (let i = 0; i < REQUESTS; i++) {
    const res = new FakeResponse();
    await stack.listener(incoming(stack.paths[i % stack.paths.length]!, stack.keys[i % stack.keys.length]!), res);
    if (res.statusCode !== 200) throw new Error(`${dir}: ${res.statusCode} ${res.body}`);
  }
  counting = false;
  hook.disable();
  return promises / REQUESTS;
}

const sides = existsSync(resolve(BASE_DIR, 'packages/hono/dist/index.js')) ? { base: BASE_DIR, head: HEAD_DIR } : { head: HEAD_DIR };
if (!('base' in sides)) console.log(`no built checkout at ${BASE_DIR} (BENCH_BASE_DIR): this checkout only`);
const rows: Record<string, Record<string, number>> = {};
for (const [label, parts] of STACKS) {
  rows[label] = {};
  for (const [side, dir] of Object.entries(sides)) rows[label][`${side}: promises per request`] = await promisesPerRequest(dir, parts);
}
console.table(rows);
if (SITES) {
  await promisesPerRequest(HEAD_DIR, { auth: true, paginate: true });
  for (const [site, n] of [...sites].sort((a, b) => b[1] - a[1])) console.log(`${(n / REQUESTS).toFixed(1).padStart(5)}  ${site}`);
}
