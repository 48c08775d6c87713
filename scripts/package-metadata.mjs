#!/usr/bin/env node
/**
 * Writes the registry metadata every published package carries (repository with its
 * directory, homepage, bugs, MIT LICENSE copied from the root, `files` without test code)
 * so a new package gets it with one command: `node scripts/package-metadata.mjs`.
 * `test/packages.test.ts` checks the result.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPOSITORY = 'https://github.com/keyset-dev/keyset';
/** Test code that must never ship, whatever a package's `src/` holds. */
export const EXCLUDED = [
  '!src/**/*.test.ts',
  '!src/**/*.test-support.ts',
  '!src/**/*.contract.ts',
  '!src/**/*.bench.ts',
  '!src/**/testing',
];

const root = new URL('..', import.meta.url).pathname;
for (const dir of readdirSync(join(root, 'packages'))) {
  const file = join(root, 'packages', dir, 'package.json');
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    continue;
  }
  if (pkg.private) continue;
  const { name, version, description, keywords, license, ...rest } = pkg;
  const ordered = {
    name,
    version,
    description,
    keywords: keywords ?? [],
    license: license ?? 'MIT',
    repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory: `packages/${dir}` },
    homepage: `${REPOSITORY}/tree/main/packages/${dir}#readme`,
    bugs: { url: `${REPOSITORY}/issues` },
    ...rest,
  };
  ordered.files = ['dist', 'src', ...EXCLUDED];
  writeFileSync(file, `${JSON.stringify(ordered, null, 2)}\n`);
  copyFileSync(join(root, 'LICENSE'), join(root, 'packages', dir, 'LICENSE'));
}
