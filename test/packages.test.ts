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
import { describe, expect, it } from 'vitest';

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

/** The tarball's file list, from npm itself (no build needed: only `dist/` would be missing). */
function packedFiles(dir: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: join(root, 'packages', dir),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
}

const TEST_CODE = /(\.test\.ts|\.test-support\.ts|\.contract\.ts|\.bench\.ts)$|(^|\/)testing\//;
const TEST_IMPORT = /from ['"](vitest|fast-check|@keyset\/conformance|@keyset\/test-support)['"]/;

describe('the root LICENSE', () => {
  it('is the MIT licence every package.json names', () => {
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} keyset contributors\n/);
  });
});

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
    const files = packedFiles(dir);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'src/index.ts']));
    expect(files.filter((f) => TEST_CODE.test(f))).toEqual([]);
    const importsTestTools = files
      .filter((f) => f.startsWith('src/') && f.endsWith('.ts'))
      .filter((f) => TEST_IMPORT.test(readFileSync(join(root, 'packages', dir, f), 'utf8')));
    expect(importsTestTools).toEqual([]);
  }, 30_000);

  it('has a README that works on the registry page: a code sample, no relative links', () => {
    const readme = readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8');
    expect(readme).toMatch(/```ts\n/);
    const relative = [...readme.matchAll(/\]\((?!https?:\/\/|#)([^)]+)\)/g)].map((m) => m[1]);
    expect(relative).toEqual([]);
  });
});
