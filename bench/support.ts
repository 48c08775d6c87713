/**
 * Shared helpers for micro benchmarks: run tinybench tasks side by side in one process,
 * print a table, and save ratios to bench/results/<name>.json for docs/benchmarks.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';

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
  const bench = new Bench({ time, warmupTime: 200 });
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

/** Writes bench/results/<name>.json with the machine and Node version. */
export function save(name: string, data: unknown): void {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ node: process.version, date: new Date().toISOString(), data }, null, 2) + '\n',
  );
  console.log(`wrote ${file}`);
}
