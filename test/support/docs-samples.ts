/**
 * The TypeScript samples of the docs (README.md, the pages under docs/, each package README), as the
 * tests that check them take them: each ```ts block with the declarations of the
 * `<!-- ts-context -->` comment above it, skipping ```ts sketch and ```ts next-app blocks.
 * test/docs-samples.test.ts type-checks them against the sources, test/pack-install.test.ts
 * against the packed packages in a project outside the workspace.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f));
  const readmes = ['README.md', ...readdirSync(join(root, 'packages')).map((p) => join('packages', p, 'README.md'))]
    .map((f) => join(root, f))
    .filter((f) => {
      try {
        readFileSync(f);
        return true;
      } catch {
        return false;
      }
    });
  return [...docs, ...readmes];
}

export interface Sample {
  file: string;
  line: number;
  code: string;
  /** Lines of declarations prepended from a `<!-- ts-context -->` comment. */
  context: string[];
}

function contextAbove(lines: string[], fence: number): string[] {
  if (fence === 0 || lines[fence - 1]!.trim() !== '-->') return [];
  let start = fence - 2;
  while (start >= 0 && !lines[start]!.startsWith('<!-- ts-context')) start--;
  return start < 0 ? [] : lines.slice(start + 1, fence - 1);
}

/** Every sample, in file order. */
export function samples(): Sample[] {
  const found: Sample[] = [];
  for (const file of markdownFiles()) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = /^```(ts|typescript)(\s.*)?$/.exec(lines[i]!);
      if (!fence || /\b(sketch|next-app)\b/.test(fence[2] ?? '')) continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && !lines[end]!.startsWith('```')) end++;
      found.push({ file: relative(root, file), line: start + 1, code: lines.slice(start, end).join('\n'), context: contextAbove(lines, i) });
      i = end;
    }
  }
  return found;
}


/**
 * `sample` as a module that runs it once per call: its imports (and the context's type
 * imports) at the top, the rest in `export async function run(<context constants>)`,
 * which returns the sample's `returns` bindings. Each `declare const name: Type;` of the
 * `ts-context` comment becomes a parameter, so a test hands the sample the real objects
 * the prose stands for (a database on a default pool, the request URL).
 */
export function sampleAsFunction(sample: Sample, returns: readonly string[]): { module: string; parameters: string[] } {
  const declared = sample.context.map((line) => /^declare const (\w+): (.+);$/.exec(line.trim())).filter((m) => m !== null);
  const contextImports = sample.context.filter((line) => line.startsWith('import '));
  const lines = sample.code.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const body = lines.filter((line) => !line.startsWith('import '));
  const parameters = declared.map((m) => m[1]!);
  const module = [
    ...contextImports,
    ...imports,
    `export async function run(${declared.map((m) => `${m[1]}: ${m[2]}`).join(', ')}) {`,
    ...body.map((line) => `  ${line}`),
    `  return { ${returns.join(', ')} };`,
    '}',
    '',
  ].join('\n');
  return { module, parameters };
}
