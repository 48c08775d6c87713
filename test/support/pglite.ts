/**
 * PGlite for tests, started from a data directory that initdb filled once per machine.
 *
 * Most of a new PGlite's start is initdb, paid again by every file that creates one. A copy
 * of an initialised directory is the same database (nothing but initdb has run in it, so
 * every test still starts from an empty cluster) and opens about four times sooner: on
 * 2026-11-28, two cores at a load average of 20, `PGlite.create()` took 9.6 s,
 * `createPglite()` 2.2 s, and copying the directory then opening it 2.2 s (one script,
 * the three side by side). The directory is kept under node_modules/.cache, named after the PGlite
 * version, so the first run after an install builds it and later runs only copy it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, cpSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';

const CACHE = fileURLToPath(new URL('../../node_modules/.cache/keyset-tests/', import.meta.url));

/** Where the initialised template lives: `pgdata/` (a data directory) and `pgdata.tar` (its dump). */
interface Template {
  pgdata: string;
  tarball: string;
}

function templatePaths(dir: string): Template {
  return { pgdata: join(dir, 'pgdata'), tarball: join(dir, 'pgdata.tar') };
}

/** The template, built on first use. Files running at once may each build one: the first rename wins, the rest are dropped. */
async function template(): Promise<Template> {
  // The package exports no ./package.json; its entry sits in dist/, one level below it.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const { version } = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  const dir = join(CACHE, `pglite-${version}`);
  if (existsSync(dir)) return templatePaths(dir);
  mkdirSync(CACHE, { recursive: true });
  const building = mkdtempSync(join(CACHE, 'building-'));
  const paths = templatePaths(building);
  const db = await PGlite.create(paths.pgdata);
  const dump = await db.dumpDataDir('none');
  await db.close();
  writeFileSync(paths.tarball, Buffer.from(await dump.arrayBuffer()));
  try {
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
  return templatePaths(dir);
}

/**
 * An in-memory PGlite, as `PGlite.create(options)` makes one, started from the template.
 * @example
 * const db = await createPglite();
 * await db.query('SELECT 1');
 */
export async function createPglite(options: Omit<PGliteOptions, 'loadDataDir' | 'dataDir'> = {}): Promise<PGlite> {
  const { tarball } = await template();
  return PGlite.create({ ...options, loadDataDir: new Blob([readFileSync(tarball)]) });
}

/**
 * Fills `pgdata` (which must not exist yet) with a copy of the template, so a PGlite opened
 * there finds an initialised data directory instead of running initdb.
 * @example
 * copyPgliteDataDir(join(dataDir, 'pgdata'));
 */
export async function copyPgliteDataDir(pgdata: string): Promise<void> {
  const source = await template();
  cpSync(source.pgdata, pgdata, { recursive: true, errorOnExist: true, force: false });
}
