/**
 * What a user gets from the registry, for every published package: the MIT LICENSE,
 * metadata that leads back to the repository (repository with its directory, homepage,
 * bugs, keywords), a README that works on the registry page (absolute links), and a
 * tarball with no test code in it. The list of files is npm's own (`npm pack --dry-run`),
 * so it is exactly what `files` and npm's rules let through. A new package gets the
 * metadata with `node scripts/package-metadata.mjs`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const REPOSITORY = 'https://github.com/keyset-dev/keyset';

interface Manifest {
  name: string;
  private?: boolean;
  license?: string;
  keywords?: string[];
  repository?: { type: string; url: string; directory: string };
  homepage?: string;
  bugs?: { url: string };
}

const published = readdirSync(join(root, 'packages'))
  .filter((dir) => existsSync(join(root, 'packages', dir, 'package.json')))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest }))
  .filter(({ manifest }) => manifest.private !== true);

/**
 * Each package's tarball file list, from npm itself (no build needed: only `dist/` would be
 * missing). One `npm pack` names every package's folder: npm lists each as packing it from
 * its own folder would, and starts once instead of once per package (about 2 s of CPU each).
 */
function packedFiles(): Map<string, string[]> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', ...published.map(({ dir }) => join(root, 'packages', dir))], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const listed = JSON.parse(out) as Array<{ name: string; files: Array<{ path: string }> }>;
  return new Map(listed.map((entry) => [entry.name, entry.files.map((f) => f.path)]));
}

const TEST_CODE = /(\.test\.ts|\.test-support\.ts|\.contract\.ts|\.bench\.ts)$|(^|\/)testing\//;
const TEST_IMPORT = /from ['"](vitest|fast-check|@keyset\/conformance|@keyset\/test-support)['"]/;

describe('the root LICENSE', () => {
  it('is the MIT licence every package.json names', () => {
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} keyset contributors\n/);
  });
});

/** Filled once for every package's tests below. */
let packed = new Map<string, string[]>();
beforeAll(() => {
  packed = packedFiles();
}, 120_000);

describe.each(published)('$manifest.name', ({ dir, manifest }) => {
  it('names its licence, repository directory, homepage, issue tracker and keywords', () => {
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git`, directory: `packages/${dir}` });
    expect(manifest.homepage).toBe(`${REPOSITORY}/tree/main/packages/${dir}#readme`);
    expect(manifest.bugs).toEqual({ url: `${REPOSITORY}/issues` });
    expect(manifest.keywords?.length).toBeGreaterThan(2);
  });

  it('ships the LICENSE and README, and no test code', () => {
    expect(readFileSync(join(root, 'packages', dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    const files = packed.get(manifest.name);
    expect(files, `npm pack listed no files for ${manifest.name}`).toBeDefined();
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'src/index.ts']));
    expect(files!.filter((f) => TEST_CODE.test(f))).toEqual([]);
    const importsTestTools = files!
      .filter((f) => f.startsWith('src/') && f.endsWith('.ts'))
      .filter((f) => TEST_IMPORT.test(readFileSync(join(root, 'packages', dir, f), 'utf8')));
    expect(importsTestTools).toEqual([]);
  });

  it('has a README that works on the registry page: a code sample, no relative links', () => {
    const readme = readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8');
    expect(readme).toMatch(/```ts\n/);
    const relative = [...readme.matchAll(/\]\((?!https?:\/\/|#)([^)]+)\)/g)].map((m) => m[1]);
    expect(relative).toEqual([]);
  });
});

/**
 * Core's public face (issue 22): the root entry holds what an application author uses and
 * each of its names is documented in docs/api.md; `@keyset/core/adapter` holds what adapter
 * and store authors use, each name documented in docs/adapters.md. Both list their names
 * explicitly, and every other package reaches core through these two entries only.
 */
describe("core's two entries", () => {
  const entryFile = (name: string): string => readFileSync(join(root, 'packages', 'core', 'src', `${name}.ts`), 'utf8');
  /** Every exported name of an entry file: `export { … }` and `export type { … }` lists. */
  const exportedNames = (text: string): { values: string[]; types: string[] } => {
    const values: string[] = [];
    const types: string[] = [];
    for (const m of text.matchAll(/^export\s+(type\s+)?\{([^}]*)\}\s+from\s/gm)) {
      const names = m[2]!.split(',').map((n) => n.trim()).filter((n) => n !== '');
      (m[1] === undefined ? values : types).push(...names.map((n) => n.replace(/^.*\s+as\s+/, '')));
    }
    return { values, types };
  };
  const documented = (page: string): string => readFileSync(join(root, 'docs', page), 'utf8');
  const undocumented = (names: string[], page: string): string[] => {
    const text = documented(page);
    return names.filter((n) => !new RegExp(`\`${n}[\`(<]`).test(text));
  };

  it.each(['index', 'adapter'])('%s.ts re-exports names explicitly: no export *, no value through export type', (name) => {
    const text = entryFile(name);
    expect(text).not.toMatch(/export\s+\*/);
    expect(text).not.toMatch(/export\s+\{[^}]*\btype\s/);
  });

  it('the root entry is small: at most 51 run-time names, and none is also in the adapter entry', async () => {
    const core = await import('@keyset/core');
    const adapter = await import('@keyset/core/adapter');
    const rootNames = Object.keys(core);
    // 50 until roles came: createRoleAdmin is an admin factory like createKeyAdmin and
    // createOwnerAdmin; the permission-query helpers went to the adapter entry instead.
    expect(rootNames.length).toBeLessThanOrEqual(51);
    expect(rootNames.filter((n) => n in adapter)).toEqual([]);
    // The file's lists are what the module exports (the docs check below reads the lists).
    expect(exportedNames(entryFile('index')).values.sort()).toEqual(rootNames.sort());
    expect(exportedNames(entryFile('adapter')).values.sort()).toEqual(Object.keys(adapter).sort());
  });

  it('documents every root export in docs/api.md, values and types', () => {
    const { values, types } = exportedNames(entryFile('index'));
    expect(undocumented([...values, ...types], 'api.md')).toEqual([]);
  });

  it('documents every adapter-entry export in docs/adapters.md, values and types', () => {
    const { values, types } = exportedNames(entryFile('adapter'));
    expect(undocumented([...values, ...types], 'adapters.md')).toEqual([]);
  });

  /** Non-test source files of a folder, recursively. */
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'testing' || entry.name === 'node_modules' ? [] : sources(path);
      return entry.name.endsWith('.ts') && !TEST_CODE.test(entry.name) ? [path] : [];
    });
  const specifiers = (file: string): string[] =>
    [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);

  const others = readdirSync(join(root, 'packages')).filter((dir) => dir !== 'core' && existsSync(join(root, 'packages', dir, 'src')));
  it.each(others)('packages/%s reaches core through @keyset/core and @keyset/core/adapter only, and no other package', (dir) => {
    const offending = sources(join(root, 'packages', dir, 'src')).flatMap((file) =>
      specifiers(file)
        .filter((s) => (s.startsWith('@keyset/') && s !== '@keyset/core' && s !== '@keyset/core/adapter') || /^(\.\.\/){2,}/.test(s))
        .map((s) => `${file.slice(root.length)}: ${s}`),
    );
    expect(offending).toEqual([]);
  });

  it('the example and the benchmarks import no file inside a package', () => {
    const files = [...sources(join(root, 'examples')), ...sources(join(root, 'bench'))];
    const offending = files.flatMap((file) =>
      specifiers(file)
        .filter((s) => /^@keyset\/[a-z-]+\/(?!adapter$|fixture$)/.test(s) || /packages\/[a-z-]+\/(src|dist)\//.test(s))
        .map((s) => `${file.slice(root.length)}: ${s}`),
    );
    expect(offending).toEqual([]);
  });
});
