/**
 * The README's "Using it" sample, as its tests take it: the first `ts` block under that
 * heading (test/readme-sample.test.ts runs it against the sources, test/pack-install.test.ts
 * from the packed tarballs, test/docs-samples.test.ts type-checks it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The sample's source text. */
export function readmeUsingIt(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Using it'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README has no ts block under "Using it"');
  return match[1]!;
}

/**
 * The complete server of a package README: its first `ts` block (packages/hono and
 * packages/express open with one), for test/readme-sample.test.ts to run as pasted.
 */
export function packageReadmeServer(pkg: string): string {
  const readme = readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8');
  const match = /```ts\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error(`packages/${pkg}/README.md has no ts block`);
  return match[1]!;
}
