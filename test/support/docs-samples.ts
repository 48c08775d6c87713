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


/** The package READMEs of the published packages (a private package's is for this repository). */
export function publishedReadmes(): string[] {
  return readdirSync(join(root, 'packages'))
    .filter((dir) => (JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { private?: boolean }).private !== true)
    .map((dir) => join('packages', dir, 'README.md'));
}

/**
 * What the `npm install` commands of a Markdown file install, in its fenced blocks and in
 * its inline code (the servers' "`npm install tsx` too"): package names and paths, in order.
 */
export function npmInstalls(file: string): string[] {
  const markdown = readFileSync(join(root, file), 'utf8');
  const blocks = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const spans = [...markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return [...blocks, ...spans].flatMap((code) =>
    [...code.matchAll(/\bnpm install((?: +[^\s;&|`]+)+)/g)].flatMap((m) => m[1]!.trim().split(/ +/).filter((word) => !word.startsWith('-'))),
  );
}

/** The packages a sample imports (`pg`, `@keyset/core`, `drizzle-orm` for `drizzle-orm/pg-core`), not Node's own modules. */
export function importedPackages(code: string): string[] {
  const specifiers = [...code.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
  const names = specifiers
    .filter((specifier) => !specifier.startsWith('node:') && !specifier.startsWith('.'))
    .map((specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
  return [...new Set(names)];
}

/**
 * `sample` as a module that runs it once per call: its imports at the top, the rest in
 * `export async function run(<injected names>)`, which returns the sample's `returns`
 * bindings. Each name in `inject` is a top-level `const name = …;` line of the sample
 * (the database it opens, the request URL it stands for) that becomes a parameter instead,
 * so a test hands the sample the real objects (a database on a default pool, each page's
 * URL); lines that close what was injected (`await db.destroy()`, `await db.$client.end()`)
 * are left to the test, which owns it.
 */
export function sampleAsFunction(sample: Sample, returns: readonly string[], inject: readonly string[]): { module: string } {
  const lines = sample.code.split('\n');
  const imports = lines.filter((line) => line.startsWith('import '));
  const injected = (line: string): boolean => inject.some((name) => line.startsWith(`const ${name} = `) || line.startsWith(`await ${name}.destroy()`) || line.startsWith(`await ${name}.$client.end()`));
  for (const name of inject) {
    if (!lines.some((line) => line.startsWith(`const ${name} = `))) throw new Error(`${sample.file}: the sample declares no \`const ${name} = …\` to inject`);
  }
  const body = lines.filter((line) => !line.startsWith('import ') && !injected(line));
  const module = [
    ...imports,
    `export async function run(${inject.map((name) => `${name}: any`).join(', ')}) {`,
    ...body.map((line) => `  ${line}`),
    `  return { ${returns.join(', ')} };`,
    '}',
    '',
  ].join('\n');
  return { module };
}

/**
 * Whether a sample imports a module of the reader's project (`./generated/prisma/client.ts`,
 * which the README's generate step writes): it type-checks only where that step ran, in the
 * project test/pack-install.test.ts makes.
 */
export function importsRelative(code: string): boolean {
  return /^\s*import\b[^'"]*?\bfrom\s+['"]\.\.?\//m.test(code);
}

/**
 * The files a Markdown page has its reader write: each fenced block whose first line is a
 * comment naming a relative path (`// prisma/schema.prisma`), with its content.
 */
export function filesToWrite(file: string): Array<{ path: string; content: string }> {
  const markdown = readFileSync(join(root, file), 'utf8');
  return [...markdown.matchAll(/^```[^\n]*\n\/\/ ((?:[\w.-]+\/)*[\w.-]+\.[a-z]+)\n([\s\S]*?)^```/gm)].map((m) => ({ path: m[1]!, content: `// ${m[1]}\n${m[2]}` }));
}

/**
 * The shell blocks of a Markdown page a reader runs in their project (`npx prisma generate`):
 * every ```sh block not marked `<!-- illustrative: … -->` on the line above.
 */
export function shellSteps(file: string): string[] {
  const markdown = readFileSync(join(root, file), 'utf8');
  return [...markdown.matchAll(/^(.*)\n```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].filter((m) => !m[1]!.startsWith('<!-- illustrative:')).map((m) => m[2]!);
}
