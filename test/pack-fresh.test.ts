/**
 * docs/getting-started.md's pack command, `pack:fresh`, in a copy of the repository with no
 * node_modules (offline, from the package store the full install filled). Its install
 * (`pack:fresh --install-only` stops after it) must take only what the build needs: within
 * 400 MB, none of the test toolchain, and every peer the packages' types are built against
 * (with its types). With `PACK_FRESH_FULL=1` the whole command runs as written, builds and
 * packs every published package, types included, and prints the install size and the
 * time: `PACK_FRESH_FULL=1 npx vitest run test/pack-fresh.test.ts` (about 50 s of CPU, a
 * minute or more of waiting, too long for every run; figures in docs/packaging.md,
 * "Tarballs from a fresh clone").
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Only tests, benchmarks and mutation testing use these; packing must not install them. */
const TEST_ONLY = ['vitest', 'next', 'react', 'playwright-core', 'bun', 'deno', 'workerd', '@stryker-mutator+core', 'autocannon', 'fast-check', 'tinybench'];
/** Not copied: installed, built or written by earlier runs. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.data', '.packs', 'test-artifacts', '.nextjs-check', '.docs-check', '.docs-run', '.readme-sample', '.bench-tmp', 'coverage']);
/** What the install may take, in bytes on disk. */
const BUDGET = 400 * 1000 * 1000;

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  peerDependencies?: Record<string, string>;
  types?: string;
  typings?: string;
  exports?: unknown;
}
const published = readdirSync(join(root, 'packages'))
  .map((dir) => ({ dir, ...(JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest) }))
  .filter((manifest) => manifest.private !== true);
const full = process.env.PACK_FRESH_FULL === '1';
if (!full) console.warn('pack:fresh: its install only; PACK_FRESH_FULL=1 runs the build and packing too');

describe('`pack:fresh` in a fresh copy of the repository', () => {
  const copy = mkdtempSync(join(tmpdir(), 'keyset-pack-fresh-'));
  let seconds = 0;
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  beforeAll(() => {
    cpSync(root, copy, { recursive: true, filter: (from) => !relative(root, from).split(sep).some((part) => SKIPPED.has(part)) });
    const guide = readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8');
    const command = /```sh\n(npx -y pnpm@10\.34\.9 pack:fresh)\n```/.exec(guide.slice(guide.indexOf('## Before keyset is on npm')))?.[1];
    expect(command, 'docs/getting-started.md gives `npx -y pnpm@10.34.9 pack:fresh` to pack').toBeDefined();
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_config_')));
    const started = performance.now();
    // Offline: the test reads pnpm's store, never the registry (the full install filled it).
    execFileSync('sh', ['-c', full ? command! : `${command} --install-only`], {
      cwd: copy,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, CI: 'true', npm_config_offline: 'true' },
    });
    seconds = (performance.now() - started) / 1000;
  }, 600_000);

  it('installs within 400 MB', () => {
    const dirs = [join(copy, 'node_modules'), ...['packages', 'tools'].flatMap((parent) => readdirSync(join(copy, parent)).map((dir) => join(copy, parent, dir, 'node_modules')))].filter((dir) => existsSync(dir));
    // du counts a file hard-linked twice (pnpm's layout) once.
    const bytes = Number(/(\d+)\s+total/.exec(execFileSync('du', ['-skc', ...dirs], { encoding: 'utf8' }))![1]) * 1024;
    console.log(`pack:fresh: ${(bytes / 1e6).toFixed(0)} MB installed, ${readdirSync(join(copy, 'node_modules', '.pnpm')).length} packages, ${seconds.toFixed(0)} s for ${full ? 'the install, build and pack' : 'the install'}`);
    expect(bytes).toBeGreaterThan(10 * 1000 * 1000);
    expect(bytes).toBeLessThanOrEqual(BUDGET);
  });

  it('installs none of the test toolchain', () => {
    const installed = readdirSync(join(copy, 'node_modules', '.pnpm'));
    for (const name of TEST_ONLY) expect(installed.filter((dir) => dir.startsWith(`${name}@`)), name).toEqual([]);
  });

  it("links at the root only what the root declares, so the full install after it leaves no stray link", () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
    const linked = readdirSync(join(copy, 'node_modules'))
      .filter((entry) => !entry.startsWith('.'))
      .flatMap((entry) => (entry.startsWith('@') ? readdirSync(join(copy, 'node_modules', entry)).map((name) => `${entry}/${name}`) : [entry]));
    expect(linked.length).toBeGreaterThan(5);
    expect(linked.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('installs every peer the packages build their types against, with its types', () => {
    for (const manifest of published) {
      // Where TypeScript looks for a bare import from the package's sources: the
      // node_modules folders of the copy, not Node's global folders (NODE_PATH, which the
      // test runner's own launcher sets to this repository's full install); not
      // `require.resolve('x/package.json')`, which a package's `exports` may refuse.
      const lookup = (createRequire(join(copy, 'packages', manifest.dir, 'src', 'index.ts')).resolve.paths('x') ?? []).filter((dir) => !relative(copy, dir).startsWith('..'));
      const find = (name: string): string | undefined => lookup.map((modules) => join(modules, name)).find((candidate) => existsSync(join(candidate, 'package.json')));
      for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
        const dir = find(peer);
        expect(dir, `${manifest.name}: ${peer}`).toBeDefined();
        const own = JSON.parse(readFileSync(join(dir!, 'package.json'), 'utf8')) as Manifest;
        // Types of its own: declared, or an index.d.ts where TypeScript looks beside the entry.
        const typed =
          own.types !== undefined || own.typings !== undefined || JSON.stringify(own.exports ?? {}).includes('"types') || ['index.d.ts', 'dist/index.d.ts'].some((file) => existsSync(join(dir!, file)));
        if (!typed) expect(find(`@types/${peer}`), `${manifest.name}: @types/${peer}`).toBeDefined();
      }
    }
  });

  it.skipIf(!full)('packs every published package, built with its types', () => {
    const packs = join(copy, '.packs');
    expect(readdirSync(packs).sort()).toEqual(published.map((m) => `${m.name.replace('@', '').replace('/', '-')}-${m.version}.tgz`).sort());
    for (const file of readdirSync(packs)) {
      const listed = execFileSync('tar', ['tzf', join(packs, file)], { encoding: 'utf8' }).split('\n');
      for (const entry of ['package/dist/index.js', 'package/dist/index.cjs', 'package/dist/index.d.ts', 'package/dist/index.d.cts']) expect(listed, file).toContain(entry);
    }
  });
});
