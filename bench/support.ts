/**
 * Shared helpers for the benchmarks: run tinybench tasks side by side in one process,
 * print a table, save figures to bench/results/<name>.json for docs/benchmarks.md, and
 * the smoke mode that test/bench-smoke.test.ts runs every benchmark in.
 *
 * Smoke mode (BENCH_SMOKE=1): each benchmark runs its whole code path with a few
 * requests or iterations (`setting()` in settings.ts picks the small size), against the
 * TypeScript sources where it would otherwise bundle the build, and `save()` writes to
 * BENCH_RESULTS_DIR instead of bench/results/, so a test run never replaces the figures
 * the docs quote. Its figures mean nothing; that it produces them at all is the point.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { ROOT, SMOKE, TMP } from './settings.ts';

export { ROOT, setting, SMOKE, TMP } from './settings.ts';

// Every benchmark that loads this module may write scratch files.
mkdirSync(TMP, { recursive: true });

/** The machine's 1-minute load average when the benchmark started: saved beside its figures. */
const LOAD_AT_START = loadavg()[0]!;

export interface Case {
  name: string;
  fn: () => unknown | Promise<unknown>;
}

export interface Row {
  name: string;
  nsPerOp: number;
  opsPerSec: number;
  samples: number;
  /** Speed relative to the group's baseline (>1 = faster than the baseline). */
  vsBaseline: number;
}

/**
 * Runs `cases` in one tinybench instance (interleaved warm-up, same process) and reports
 * each case's speed relative to `baseline` (the name of one case).
 */
export async function compare(group: string, baseline: string, cases: Case[], time = 1000): Promise<Row[]> {
  // Smoke mode: a few iterations of each case, enough to run every line once or twice.
  const bench = SMOKE ? new Bench({ time: 1, iterations: 3, warmup: false, throws: true }) : new Bench({ time, warmupTime: 200, throws: true });
  for (const c of cases) bench.add(c.name, c.fn);
  await bench.run();
  const raw = bench.tasks.map((t) => {
    const r = t.result as unknown as { latency?: { mean: number; samplesCount?: number }; throughput?: { mean: number } };
    const meanMs = r.latency?.mean ?? NaN;
    return { name: t.name, nsPerOp: meanMs * 1e6, opsPerSec: 1000 / meanMs, samples: r.latency?.samplesCount ?? 0 };
  });
  const base = raw.find((r) => r.name === baseline);
  const rows = raw.map((r) => ({ ...r, vsBaseline: base ? base.nsPerOp / r.nsPerOp : NaN }));
  console.log(`\n${group} (baseline: ${baseline})`);
  console.table(
    rows.map((r) => ({
      case: r.name,
      'ns/op': r.nsPerOp.toFixed(0),
      'ops/s': Math.round(r.opsPerSec).toLocaleString('en-US'),
      'x baseline': r.vsBaseline.toFixed(2),
    })),
  );
  return rows;
}

/**
 * Writes bench/results/<name>.json (BENCH_RESULTS_DIR in smoke mode) with the date, the
 * Node version and the 1-minute load average at the start and at the end of the run (on a
 * shared machine, figures taken under load are worth less: docs/benchmarks.md shows it).
 */
export function save(name: string, data: unknown): void {
  const dir = SMOKE ? (process.env.BENCH_RESULTS_DIR ?? join(ROOT, '.bench-tmp', 'smoke')) : join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ node: process.version, date: new Date().toISOString(), loadAverage: [LOAD_AT_START, loadavg()[0]!], data }, null, 2) + '\n',
  );
  console.log(`wrote ${file}`);
}
