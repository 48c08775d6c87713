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
