/**
 * Benchmarks cannot rot: every bench/*.bench.ts runs here in its smoke mode
 * (BENCH_SMOKE=1: a few requests or iterations per stack, against the sources, no build),
 * each in a child process as `pnpm bench <name>` runs it. A benchmark fails this test if
 * it exits non-zero or saves no figures. No timing is asserted: the figures of a smoke
 * run mean nothing, only that the benchmark still produces them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const benches = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const results = mkdtempSync(join(tmpdir(), 'bench-smoke-'));

interface Run {
  code: number | null;
  output: string;
}

function smoke(name: string): Promise<Run> {
  // The caller's BENCH_* settings would turn a smoke run back into a long one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BENCH_')));
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench', `${name}.bench.ts`)], {
    cwd: root,
    env: {
      ...env,
      BENCH_SMOKE: '1',
      BENCH_RESULTS_DIR: results,
      BENCH_SMOKE_ID: `${name}-${process.pid}`,
      TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

/** Every number in a saved result, however deep. */
function numbers(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value)) return value.flatMap(numbers);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(numbers);
  return [];
}

afterAll(() => {
  rmSync(results, { recursive: true, force: true });
  for (const name of benches) rmSync(join(root, '.bench-tmp', `smoke-${name}-${process.pid}`), { recursive: true, force: true });
});

describe('every benchmark runs and produces figures (smoke mode)', () => {
  it('finds the benchmarks', () => {
    expect(benches).toContain('http');
    expect(benches).toContain('inprocess-adapters');
    expect(benches).toContain('capacity');
  });

  // A few at a time (vitest's maxConcurrency): most of a smoke run is process start-up and
  // waiting on servers and databases, which overlaps well even on two cores. The timeout
  // is for a loaded machine (2026-11-28, load average 41 on 2 cores: db-depth's smoke run
  // took over 240 s there, 45 s alone at load 28); it asserts nothing about speed.
  it.concurrent.each(benches)('bench %s', async (name) => {
    const run = await smoke(name);
    expect(run.code, run.output.slice(-4000)).toBe(0);
    const file = join(results, `${name}.json`);
    expect(existsSync(file), `${name} saved no figures\n${run.output.slice(-4000)}`).toBe(true);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { node: string; date: string; data: unknown };
    expect(saved.node).toBe(process.version);
    const figures = numbers(saved.data);
    expect(figures.some((n) => Number.isFinite(n) && n > 0), `${name}: no positive figure in ${file}`).toBe(true);
    // It printed them too: a table (console.table) or a line of figures.
    expect(run.output).toMatch(/│|\d+(\.\d+)? (µs|ms|ns|req\/s|bytes)/);
  }, 600_000);
});
