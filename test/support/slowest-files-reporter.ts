/**
 * A vitest reporter that prints the ten slowest test files at the end of every run, so a file
 * that turns slow shows in the next run's output instead of only in a longer wait.
 *
 * A file's time is what it held a worker for: setting up its environment, importing it and
 * its dependencies, then running its hooks and tests.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';
import { durationKey, type Durations } from './file-order.ts';

/** How many files the table lists. */
const SHOWN = 10;

/** One row of the table: a file, its project and the milliseconds it held a worker. */
interface FileTime {
  file: string;
  project: string;
  ms: number;
}

function fileTime(module: TestModule): FileTime {
  const d = module.diagnostic();
  return {
    file: module.relativeModuleId,
    project: module.project.name,
    ms: d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration,
  };
}

/** The rows, slowest first. */
export function slowestFiles(modules: ReadonlyArray<TestModule>, count = SHOWN): FileTime[] {
  return modules
    .map(fileTime)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
}

/** The table as printed: seconds with one decimal, then the file and its project. */
export function formatSlowestFiles(rows: ReadonlyArray<FileTime>): string {
  const lines = rows.map((r) => {
    const seconds = (r.ms / 1000).toFixed(1).padStart(7);
    const project = r.project === '' ? '' : ` [${r.project}]`;
    return `${seconds} s  ${r.file}${project}`;
  });
  return ['Slowest test files:', ...lines].join('\n');
}

/**
 * The times to record for the sequencer: `previous` with every file of this run set to its
 * time in seconds (one decimal), keys sorted so a rerun changes only the lines that moved.
 * Files this run did not touch keep their time, so a partial run loses nothing.
 */
export function recordedDurations(modules: ReadonlyArray<TestModule>, previous: Durations): Durations {
  const next: Record<string, number> = { ...previous };
  for (const row of modules.map(fileTime)) next[durationKey(row.project, row.file)] = Math.round(row.ms / 100) / 10;
  return Object.fromEntries(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Where the table goes. */
interface Output {
  write(text: string): unknown;
}

export default class SlowestFilesReporter implements Reporter {
  readonly #out: Output;
  readonly #record: URL | undefined;

  /**
   * `out` defaults to stdout: listed after the default reporter, the table is the last thing
   * a run prints. With `record`, every file's time is also written there, as the sequencer
   * reads it.
   */
  constructor(out: Output = process.stdout, record?: URL) {
    this.#out = out;
    this.#record = record;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length === 0) return;
    this.#out.write(`\n${formatSlowestFiles(slowestFiles(testModules))}\n`);
    if (this.#record !== undefined) {
      let previous: Durations = {};
      try {
        previous = JSON.parse(readFileSync(this.#record, 'utf8')) as Durations;
      } catch {
        // No table yet: this run starts it.
      }
      writeFileSync(this.#record, `${JSON.stringify(recordedDurations(testModules, previous), null, 2)}\n`);
    }
  }
}
