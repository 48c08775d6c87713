/**
 * Files the example keeps in `DATA_DIR`: the generated cursor secret, the bootstrap
 * admin key, the process lock that keeps PGlite (a single-process database) to one
 * owner, and PGlite's own `pgdata/`. Secrets are written with mode 0600.
 * @module
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cursorSecrets } from '@keyset/core';

/** Paths inside a data directory. */
export function dataPaths(dataDir: string): { pgdata: string; cursorSecret: string; adminKey: string; lock: string } {
  return {
    pgdata: join(dataDir, 'pgdata'),
    cursorSecret: join(dataDir, 'cursor.secret'),
    adminKey: join(dataDir, 'admin.key'),
    lock: join(dataDir, 'orders-api.lock'),
  };
}

/** Creates the data directory (mode 0700) if needed. */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/**
 * The cursor secret of this data directory: generated once (256 random bits) and kept
 * in `cursor.secret` so cursors survive restarts. Several instances must share
 * `CURSOR_SECRETS` instead, or a cursor signed by one fails on the other. It is made by
 * `cursorSecrets()` in development mode, so such a failure's problem says that likely cause.
 */
export function loadOrCreateCursorSecret(dataDir: string): string {
  const file = dataPaths(dataDir).cursorSecret;
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const [secret] = cursorSecrets(undefined, { development: true }) as [string];
  writeSecretFile(file, `${secret}\n`);
  return secret;
}

/** Writes a secret file readable by its owner only (0600), also when it already existed. */
export function writeSecretFile(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** Thrown when another live process holds the data directory. */
export class DataDirLockedError extends Error {
  readonly pid: number;
  readonly holder: string;
  constructor(dataDir: string, pid: number, holder: string) {
    super(`DATA_DIR ${dataDir} is in use by ${holder} (pid ${pid})`);
    this.name = 'DataDirLockedError';
    this.pid = pid;
    this.holder = holder;
  }
}

/**
 * Takes the data directory's lock for this process (`holder` says who: "server" or
 * "cli"). A lock left by a dead process is taken over. Returns the release function.
 */
export function lockDataDir(dataDir: string, holder: string): () => void {
  const file = dataPaths(dataDir).lock;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() }), { flag: 'wx', mode: 0o600 });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const current = readLock(file);
      // The same pid counts too: two servers in one process must not share PGlite either.
      if (current && isAlive(current.pid)) {
        throw new DataDirLockedError(dataDir, current.pid, current.holder);
      }
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not lock DATA_DIR ${dataDir}`);
}

function readLock(file: string): { pid: number; holder: string } | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; holder?: unknown };
    if (typeof parsed.pid === 'number') return { pid: parsed.pid, holder: typeof parsed.holder === 'string' ? parsed.holder : 'another process' };
  } catch {
    // unreadable or half-written: treat as stale
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
