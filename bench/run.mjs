#!/usr/bin/env node
// `pnpm bench [name…]`: runs bench/<name>.bench.ts (all of them by default), each in its
// own process so one benchmark's heap and JIT state never colour another's.
// Every bench prints a table and writes bench/results/<name>.json; docs/benchmarks.md
// reports the ratios from those files. The packages are built first when a benchmark
// that measures the build is among them; the others run on the TypeScript sources.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const all = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const names = wanted.length ? wanted : all;
/** Benchmarks that load or bundle the built packages (dist/), as users run them. */
const BUILT = ['bundle-size', 'http', 'inprocess-ab'];
let failed = 0;
if (names.some((name) => BUILT.includes(name))) {
  // Through the pnpm that runs this script (`pnpm bench`), else the pinned one.
  const pnpm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath, 'build']]
    : ['npx', ['-y', 'pnpm@10.34.9', 'build']];
  const build = spawnSync(pnpm[0], pnpm[1], { stdio: 'inherit', cwd: join(here, '..') });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
for (const name of names) {
  if (!all.includes(name)) {
    console.error(`no bench/${name}.bench.ts (have: ${all.join(', ')})`);
    failed++;
    continue;
  }
  console.log(`\n=== ${name} ===`);
  // inprocess-ab loads a base checkout's built packages, whose own `@keyset/*` imports
  // tsconfig.json's paths would send to this checkout's sources: it runs without paths.
  const tsconfig = name === 'inprocess-ab' ? 'tsconfig.base.json' : 'tsconfig.json';
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(here, `${name}.bench.ts`)],
    { stdio: 'inherit', env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', tsconfig) } },
  );
  if (run.status !== 0) failed++;
}
// Refresh the tables in docs/benchmarks.md from whatever results exist now.
spawnSync(process.execPath, [join(here, 'report.mjs')], { stdio: 'inherit' });
process.exit(failed ? 1 : 0);
