/**
 * Every shell command the docs give runs, with only Node and npm on the machine.
 *
 * - No bare `pnpm` (a newcomer has npm, not pnpm): every command goes through
 *   `npx -y pnpm@10.34.9 …` (or `npm`/`npx`/`node`). Scanned in code (fenced blocks and
 *   inline code spans, which may wrap a line) of every Markdown file the repository
 *   ships, and in the key CLI's help.
 * - Every shell block (```sh, ```bash, ```shell, ```console) of README.md, docs/*.md,
 *   packages/* and examples/* READMEs is one of: run here, against a started example;
 *   run by another test named below (which reads it from the page); or marked
 *   `<!-- illustrative: reason -->` on the line above it, the reason beside it for a reader.
 *   A block marked `<!-- cheaper: reason -->` runs here with its expensive commands
 *   checked by a cheaper equivalent the reason names (`npx vitest run …` → the files
 *   `vitest list --filesOnly …` selects: running the suite inside one of its tests would
 *   run that test again).
 * - Blocks run here run as written in bash (`-euo pipefail`), each page's blocks in order in
 *   one shell (later blocks use the variables of earlier ones), against an example on
 *   PostgreSQL (so the key CLI works beside the running server, as the docs say), with the
 *   page's placeholders made real (see PLACEHOLDERS). `npx -y pnpm@10.34.9 keys|start`
 *   run the root script's own command, read from package.json: pnpm itself adds 10-15 s
 *   a line on a busy machine and nothing else (examples/orders-api/test/commands.test.ts
 *   runs the `npx -y pnpm@10.34.9` form itself). A `start` runs until the server logs that
 *   it listens, then gets Ctrl-C and must exit 0. Every `curl` must get an answer below 500.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HELP } from '../examples/orders-api/src/cli.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function markdownFiles(): string[] {
  const inDir = (dir: string): string[] =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
          entry.isDirectory()
            ? [join(dir, entry.name, 'README.md')].filter((f) => existsSync(join(root, f)))
            : entry.name.endsWith('.md')
              ? [join(dir, entry.name)]
              : [],
        )
      : [];
  return ['README.md', ...inDir('docs'), ...inDir('packages'), ...inDir('examples')];
}

/** Code a reader would copy: fenced blocks and inline `code` spans. */
function codeOf(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  // A span may wrap onto the next line, as Markdown allows; it never spans a blank line.
  const spans = [...prose.matchAll(/`((?:[^`\n]|\n(?!\s*\n))+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' '));
  return [...blocks, ...spans];
}

/** `pnpm <word>` not preceded by `npx -y ` (and not `pnpm-lock`, `pnpm@…`, `pnpm's`). */
function barePnpm(code: string): string[] {
  const found: string[] = [];
  for (const match of code.matchAll(/(?<![\w@/.-])pnpm(?=[ \t]+-{0,2}[a-z])/g)) {
    const before = code.slice(Math.max(0, match.index - 7), match.index);
    if (before === 'npx -y ') continue;
    const lineStart = code.lastIndexOf('\n', match.index) + 1;
    const lineEnd = code.indexOf('\n', match.index);
    found.push(code.slice(lineStart, lineEnd === -1 ? undefined : lineEnd).trim());
  }
  return found;
}

describe('commands work with only Node and npm', () => {
  it.each(markdownFiles())('%s has no bare `pnpm` command', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(codeOf(text).flatMap(barePnpm), relative(root, join(root, file))).toEqual([]);
  });

  it('the key CLI help shows the npx form', () => {
    expect(barePnpm(HELP)).toEqual([]);
    expect(HELP).toContain('npx -y pnpm@10.34.9 --silent keys list --json');
  });

  it('`start` and `keys` run node directly, so `npm run` works too and signals reach the server', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['start', 'keys']) expect(scripts[name]).toMatch(/^exec node /);
  });

  it('the scanner finds what it must', () => {
    expect(barePnpm('pnpm start')).toEqual(['pnpm start']);
    expect(barePnpm('DATABASE_URL=x pnpm keys list')).toEqual(['DATABASE_URL=x pnpm keys list']);
    expect(barePnpm('npx -y pnpm@10.34.9 keys list && npx -y pnpm@10.34.9 --silent keys list')).toEqual([]);
    expect(barePnpm('pnpm-lock.yaml, pnpm@10.34.9')).toEqual([]);
    expect(codeOf('the key CLI (`pnpm keys\ncreate|list`) works').flatMap(barePnpm)).toEqual(['pnpm keys create|list']);
  });
});

describe('docs stand on their own', () => {
  it.each(markdownFiles())('%s cites no document outside the repository (DESIGN.md)', (file) => {
    expect(readFileSync(join(root, file), 'utf8')).not.toMatch(/DESIGN(\.md)?\s*§/);
  });
});
