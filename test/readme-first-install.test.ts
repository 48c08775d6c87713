/**
 * The README's first command, run as written in a copy of the repository (offline, from
 * the package store the full install filled): it installs only what the example needs,
 * none of the runtimes, browser driver and framework builds only tests use, and the
 * example then starts from it and answers.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = 'npx -y pnpm@10.34.9';

/** The first sh block under "## Two commands": `<install> && <start>`. */
function firstCommand(): { install: string[]; start: string[] } {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Two commands')))?.[1]?.trim() ?? '';
  const [install, start, ...rest] = block.split(' && ');
  expect(rest).toEqual([]);
  expect(install!.startsWith(`${PNPM} install `)).toBe(true);
  expect(start).toBe(`${PNPM} start`);
  return { install: install!.split(' '), start: start!.split(' ') };
}

/** Only tests use these; the first install must not download them. */
const TEST_ONLY = ['next', 'react', 'react-dom', '@types+react', 'playwright-core', 'bun', 'deno', 'workerd', 'vitest', 'tsup'];
/** Not copied: installed, built or written by earlier runs. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.data', '.packs', 'test-artifacts', '.nextjs-check', '.docs-check', '.readme-sample', '.bench-tmp', 'coverage']);

describe("README's first command", () => {
  const copy = mkdtempSync(join(tmpdir(), 'keyset-first-install-'));
  const dataDir = join(copy, 'data');
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  beforeAll(() => {
    cpSync(root, copy, { recursive: true, filter: (from) => !relative(root, from).split(sep).some((part) => SKIPPED.has(part)) });
    const [command, ...args] = firstCommand().install;
    // --offline: the test reads the store, never the registry (the full install filled it).
    execFileSync(command!, [...args, '--offline'], { cwd: copy, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
  }, 300_000);

  it('installs none of the test-only packages', () => {
    const installed = readdirSync(join(copy, 'node_modules', '.pnpm'));
    for (const name of TEST_ONLY) expect(installed.filter((dir) => dir.startsWith(`${name}@`)), name).toEqual([]);
    expect(installed.some((dir) => dir.startsWith('@scalar+api-reference@'))).toBe(true);
  });

  it('starts the example, which serves /docs and answers with problems', async () => {
    const [command, ...args] = firstCommand().start;
    const child = spawn(command!, args, { cwd: copy, env: { ...process.env, PORT: '0', DATA_DIR: dataDir, SEED_ORDERS: '20' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const listening = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"orders API listening"/.exec(out);
          if (listening) resolve(listening[1]!);
        });
        child.once('exit', (code) => reject(new Error(`the example exited with ${code}: ${out}${err}`)));
      });
      expect((await fetch(`${url}/docs`)).status).toBe(200);
      const refused = await fetch(`${url}/api/orders`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    } finally {
      // The group: npx, pnpm and the server.
      process.kill(-child.pid!, 'SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }, 180_000);
});
