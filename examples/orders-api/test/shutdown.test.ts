/**
 * Ctrl-C always ends the server, the way a terminal sends it: SIGINT to the whole foreground
 * process group (npx, pnpm, the server, and a `tee` the output is piped into). Each run
 * starts in a group of its own from the repository root on a fresh DATA_DIR. A graceful
 * shutdown is told by the DATA_DIR lock file, which only `close()` removes; a run that hung
 * is caught by the test's timeout, never by a wall-clock assertion.
 *
 * What README.md says the user sees: the server logs `shutting down` and `stopped` and
 * exits 0; through `npx` the shell reports 130, npm's status for an interrupted command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { copyPgliteDataDir } from '@keyset/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { dataPaths } from '../src/data-dir.ts';
import { tempDir } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const LISTENING = '"orders API listening"';

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
}

/** Starts `command` with `args` in a process group of its own; `onOut` sees stdout so far. */
function startGroup(command: string, args: string[], env: Record<string, string>, onOut: (out: string, child: ChildProcess) => void): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const { CI: _ci, ...inherited } = process.env;
    const child = spawn(command, args, { cwd: ROOT, env: { ...inherited, PORT: '0', SEED_ORDERS: '20', ...env }, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      onOut(out, child);
    });
    // The reader may be destroyed on purpose: what the server writes afterwards is lost.
    child.stdout!.on('error', () => {});
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

/** Whether any process of group `pgid` is still alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until group `pgid` is empty: the leader has exited, the last of the rest are ending. */
async function groupEnded(pgid: number): Promise<boolean> {
  // `exit` of the leader came first; the others (already signalled) end on their own.
  for (let i = 0; i < 200 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 50));
  return !groupAlive(pgid);
}

const messages = (out: string): string[] =>
  out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

describe('Ctrl-C ends the server', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = tempDir('orders-shutdown-');
    dirs.push(dir);
    return dir;
  };
  /** A fresh DATA_DIR whose database initdb already made: for the runs that are not about a first start. */
  const initialised = async (): Promise<string> => {
    const dir = fresh();
    await copyPgliteDataDir(dataPaths(dir).pgdata);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('through `npx -y pnpm@10.34.9 start`: graceful shutdown, every process gone, the shell sees 130', async () => {
    const dataDir = await initialised();
    let pgid = 0;
    const ended = await startGroup('npx', ['-y', 'pnpm@10.34.9', 'start'], { DATA_DIR: dataDir }, (out, child) => {
      if (pgid === 0 && out.includes(LISTENING)) {
        pgid = child.pid!;
        process.kill(-pgid, 'SIGINT');
      }
    });
    expect(pgid, ended.out).not.toBe(0);
    expect(messages(ended.out).slice(-2)).toEqual(['shutting down', 'stopped']);
    expect(messages(ended.out)).not.toContain('second signal: exiting now');
    // npm re-raises the interrupt on itself once its child is done: a shell shows 128 + 2.
    expect(ended.signal === 'SIGINT' || ended.code === 130, `code ${ended.code}, signal ${ended.signal}`).toBe(true);
    expect(await groupEnded(pgid)).toBe(true);
    expect(existsSync(dataPaths(dataDir).lock)).toBe(false);
  }, 180_000);

  it('`npx -y pnpm@10.34.9 start | tee`: the reader dies with the same Ctrl-C, the server still ends', async () => {
    const dataDir = await initialised();
    let pgid = 0;
    // A pipeline as a shell runs it: bash, npx and tee in one group; tee dies of the SIGINT,
    // so the server's next log line meets a closed pipe (EPIPE).
    const ended = await startGroup('bash', ['-c', 'npx -y pnpm@10.34.9 start | tee'], { DATA_DIR: dataDir }, (out, child) => {
      if (pgid === 0 && out.includes(LISTENING)) {
        pgid = child.pid!;
        process.kill(-pgid, 'SIGINT');
      }
    });
    expect(pgid, ended.out).not.toBe(0);
    expect(await groupEnded(pgid)).toBe(true);
    // The graceful path ran to its end (close() removes the lock), though nothing could be logged.
    expect(existsSync(dataPaths(dataDir).lock)).toBe(false);
  }, 180_000);

  it('the server alone, its stdout reader gone before the signal: exit 0 after a graceful close', async () => {
    const dataDir = await initialised();
    let signalled = false;
    const ended = await startGroup(process.execPath, ['--import', 'tsx', 'examples/orders-api/src/main.ts'], { DATA_DIR: dataDir }, (out, child) => {
      if (!signalled && out.includes(LISTENING)) {
        signalled = true;
        child.stdout!.destroy(); // the reader dies first, as `tee` may
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    expect(signalled, ended.out).toBe(true);
    expect([ended.code, ended.signal]).toEqual([0, null]);
    expect(existsSync(dataPaths(dataDir).lock)).toBe(false);
  }, 180_000);

  it('a Ctrl-C during the first start stops the server once it is up: exit 0, nothing left half-done', async () => {
    const dataDir = fresh();
    let signalled = false;
    const ended = await startGroup(process.execPath, ['--import', 'tsx', 'examples/orders-api/src/main.ts'], { DATA_DIR: dataDir }, (out, child) => {
      if (!signalled && out.includes('first start')) {
        signalled = true;
        process.kill(-child.pid!, 'SIGINT');
      }
    });
    expect(signalled, ended.out).toBe(true);
    expect([ended.code, ended.signal]).toEqual([0, null]);
    expect(messages(ended.out).slice(-2)).toEqual(['shutting down', 'stopped']);
    expect(existsSync(dataPaths(dataDir).lock)).toBe(false);
  }, 180_000);
});
