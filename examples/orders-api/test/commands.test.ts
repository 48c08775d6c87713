/**
 * The commands the README and docs tell a newcomer to type, run exactly as written
 * through `npx -y pnpm@10.34.9` (only Node and npm on the machine), from the repository
 * root in a separate process group, the way a terminal runs them:
 * - `npx -y pnpm@10.34.9 start` says what a first start does while it does it, and a
 *   Ctrl-C (SIGINT to the whole group) stops it with exit 0 and no pnpm error line;
 * - `npx -y pnpm@10.34.9 --silent keys list --json` prints JSON and nothing else on stdout;
 * - the CLI's exit 3 (server holds DATA_DIR) reaches the shell as 3 with no pnpm error line.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir } from '../src/data-dir.ts';
import { ADMIN_KEY_NAME } from '../src/keys/bootstrap-admin-key.ts';
import { tempDir } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PNPM = ['-y', 'pnpm@10.34.9'];
/** What pnpm prints when a script fails or is interrupted; a clean run shows none of it. */
const PNPM_ERRORS = /ERR_PNPM|ELIFECYCLE|Command failed/;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Runs `npx …args` from the repository root in its own process group. */
function npx(
  args: string[],
  env: Record<string, string>,
  onOut?: (out: string, group: number) => void,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    // CI is unset so the run looks like a developer's terminal, not a CI log.
    const { CI: _ci, ...inherited } = process.env;
    const child = spawn('npx', args, {
      cwd: ROOT,
      env: { ...inherited, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      onOut?.(out, child.pid!);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

/** Log lines the server wrote (pino JSON), ignoring anything else on stdout. */
function logLines(out: string): Array<Record<string, unknown>> {
  return out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('documented commands, run with only Node and npm', () => {
  const dataDir = tempDir('orders-commands-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('`npx -y pnpm@10.34.9 start`: progress while the first start seeds, then Ctrl-C stops it cleanly', async () => {
    let interrupted = false;
    const run = await npx([...PNPM, 'start'], { DATA_DIR: dataDir, PORT: '0', SEED_ORDERS: '6000' }, (out, group) => {
      if (!interrupted && out.includes('"orders API listening"')) {
        interrupted = true;
        process.kill(-group, 'SIGINT'); // what Ctrl-C does: the whole foreground group
      }
    });
    expect(interrupted, run.out + run.err).toBe(true);
    const lines = logLines(run.out);
    const messages = lines.map((l) => l.msg);
    expect(messages[0]).toMatch(/^first start: creating the embedded PostgreSQL database/);
    // One line per seeded batch, counting up to the total, with the time so far.
    const progress = lines.filter((l) => l.msg === 'seeding orders');
    expect(progress.map((l) => l.orders)).toEqual([2500, 5000, 6000]);
    expect(progress.every((l) => l.of === 6000 && typeof l.ms === 'number')).toBe(true);
    const listening = lines.find((l) => l.msg === 'orders API listening');
    expect(listening?.readyMs).toEqual(expect.any(Number));
    // Ctrl-C: one graceful shutdown, no forced exit, nothing from pnpm.
    expect(messages.slice(-2)).toEqual(['shutting down', 'stopped']);
    expect(messages).not.toContain('second signal: exiting now');
    expect(run.out + run.err).not.toMatch(PNPM_ERRORS);
    // Either npx exits 0 or it re-raises the interrupt on itself, as a shell expects.
    expect(run.code === 0 || run.signal === 'SIGINT', `code ${run.code}, signal ${run.signal}`).toBe(true);
  }, 120_000);

  it('`npx -y pnpm@10.34.9 --silent keys list --json` prints only JSON on stdout', async () => {
    const run = await npx([...PNPM, '--silent', 'keys', 'list', '--json'], { DATA_DIR: dataDir });
    expect(run.code, run.err).toBe(0);
    const keys = JSON.parse(run.out) as Array<{ name: string; scopes: string[] }>;
    // The first start above created the admin key.
    expect(keys).toEqual([expect.objectContaining({ name: ADMIN_KEY_NAME, scopes: ['keys:admin'] })]);
  }, 60_000);

  it('exit 3 while a server holds DATA_DIR reaches the shell as 3, with the advice and no pnpm error', async () => {
    const release = lockDataDir(dataDir, 'server');
    try {
      const run = await npx([...PNPM, '--silent', 'keys', 'list'], { DATA_DIR: dataDir });
      expect(run.code).toBe(3);
      expect(run.err).toMatch(/holds .*Stop the server/s);
      expect(run.out + run.err).not.toMatch(PNPM_ERRORS);
    } finally {
      release();
    }
  }, 60_000);

  it('`npx -y pnpm@10.34.9 keys --help` shows the usage with the same npx form', async () => {
    const run = await npx([...PNPM, '--silent', 'keys', '--help'], {});
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^Usage: npx -y pnpm@10\.34\.9 keys <command>/);
  }, 60_000);
});
