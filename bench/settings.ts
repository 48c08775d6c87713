/**
 * What every benchmark reads before it starts: the repository root, smoke mode
 * (BENCH_SMOKE=1, the few-iterations run test/bench-smoke.test.ts makes of every
 * benchmark) and its sizes. No dependencies, so the benchmark servers can import it
 * without loading anything a user's server would not.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const ROOT: string = join(dirname(fileURLToPath(import.meta.url)), '..');

/** True when the benchmark runs as a smoke test (BENCH_SMOKE=1). */
export const SMOKE: boolean = process.env.BENCH_SMOKE === '1';

/**
 * Scratch files (bundles, key lists, git extracts): .bench-tmp/, or a folder of this
 * process's own in smoke mode, so smoke runs side by side never share a file. Bundles
 * stay under the repository so that their bare imports resolve from its node_modules.
 */
export const TMP: string = join(ROOT, '.bench-tmp', SMOKE ? `smoke-${process.env.BENCH_SMOKE_ID ?? process.pid}` : '');

/**
 * A numeric setting: the environment variable `name` when set, else `smoke` in smoke
 * mode, else `full`.
 *
 * @example
 * const ROUNDS = setting('BENCH_ROUNDS', 21, 1);
 */
export function setting(name: string, full: number, smoke: number): number {
  const value = process.env[name];
  return value === undefined || value === '' ? (SMOKE ? smoke : full) : Number(value);
}
