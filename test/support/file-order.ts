/**
 * The order a run starts its files in: the slowest first, by the times a whole run recorded
 * in `test/support/file-durations.json`, so the files that set how long a run takes start
 * at once instead of wherever they fall (on a fresh clone vitest has no times of its own
 * and orders files by size). A file with no recorded time (a new one) starts before every
 * recorded file of its project: it may be slow, and a fast one costs nothing early.
 *
 * Projects stay together, end to end first, then the packages, then kysely 0.28: a
 * worker that runs files without isolation goes on to the next file only when that file
 * belongs to its own project, so interleaving the projects would cost a fresh process and
 * a fresh import for most packages files. The packages' files come after the end-to-end
 * ones and fill the workers while the longest end-to-end files finish.
 *
 * `RECORD_TEST_DURATIONS=1 npx vitest run` rewrites the table (slowest-files-reporter.ts):
 * each file's whole time on a worker, in seconds.
 */
import { readFileSync } from 'node:fs';

/** Where the recorded times are, next to this file. */
export const DURATIONS_FILE = new URL('./file-durations.json', import.meta.url);

/** The order projects run in; a project not named here runs after these. */
export const PROJECT_ORDER = ['end-to-end', 'packages', 'kysely-0.28'];

/** `project:path` → seconds, as `durationKey` spells it. */
export type Durations = Readonly<Record<string, number>>;

/** The key a file's time is recorded under: its project and its path from the root. */
export function durationKey(project: string, file: string): string {
  return `${project}:${file}`;
}

/** One file to place: its key and project. */
export interface Placed {
  key: string;
  project: string;
}

/**
 * `files` in the order to start them: by project (`PROJECT_ORDER`), then files without a
 * recorded time, then the rest slowest first; ties by key, so the order is the same on
 * every machine.
 */
export function slowestFirst<T extends Placed>(files: ReadonlyArray<T>, durations: Durations): T[] {
  const rank = (project: string): number => {
    const i = PROJECT_ORDER.indexOf(project);
    return i === -1 ? PROJECT_ORDER.length : i;
  };
  const time = (key: string): number => durations[key] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => rank(a.project) - rank(b.project) || time(b.key) - time(a.key) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The recorded times; none when the table is missing. */
export function readDurations(): Durations {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Durations;
  } catch {
    // No table yet: every file counts as new, which is vitest's own order for new files.
    return {};
  }
}

