/**
 * Every TypeScript sample in the docs type-checks against the packages as they are.
 * Each ```ts block becomes a module and goes through `tsc` with the repo's settings.
 * A block that only sketches a shape says so with ```ts sketch and is skipped; the files
 * of a Next.js project (```ts next-app, docs/nextjs.md) are type-checked and built in one
 * by test/docs-nextjs.test.ts instead, as their relative imports need the project. A
 * fragment that uses names from the surrounding prose declares them in an HTML comment
 * right above its fence, invisible on the rendered page:
 *
 *     <!-- ts-context
 *     declare const guard: import('@keyset/core').ApiKeyGuard;
 *     -->
 *
 * A sample that imports a module of the reader's project (`./generated/prisma/client.ts`,
 * which its README's generate step writes) is left to test/pack-install.test.ts, which
 * type-checks and runs it in the project where that step ran.
 *
 * Not in a package's README, whose reader pastes the sample alone: there every sample
 * declares what it uses, and a published package's README's `npm install` lines name
 * every package it imports (test/pack-install.test.ts runs them in a fresh project).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importedPackages, importsRelative, npmInstalls, publishedReadmes, samples } from './support/docs-samples.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.docs-check');

describe('docs samples', () => {
  it('type-check', () => {
    // A sample importing a module of the reader's project (the Prisma client its README's
    // generate step writes) is type-checked and run in that project by test/pack-install.test.ts.
    const all = samples().filter((sample) => !importsRelative(sample.code));
    expect(all.length).toBeGreaterThan(10);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const names = all.map((s, i) => {
      const name = `${s.file.replace(/[^a-z0-9]+/gi, '_')}_L${s.line}_${i}.ts`;
      // `export {}` makes every sample its own module, so names never clash between samples.
      // The context goes on the sample's first line, so error line numbers stay the sample's own.
      writeFileSync(join(out, name), `${s.context.join(' ')}${s.code}\nexport {};\n`);
      return name;
    });
    writeFileSync(
      join(out, 'tsconfig.json'),
      JSON.stringify({ extends: '../tsconfig.json', compilerOptions: { noUnusedLocals: false, baseUrl: '..' }, include: ['./*.ts'] }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(out, 'tsconfig.json'), '--noEmit', '--pretty', 'false'], {
        cwd: root,
        encoding: 'utf8',
      });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    // Map errors back to the markdown file and line.
    const errors = output
      .split('\n')
      .filter((l) => l.startsWith('.docs-check/'))
      .map((l) => {
        const m = /^\.docs-check\/(.+?)\((\d+),\d+\): (.*)$/.exec(l);
        if (!m) return l;
        const sample = all[names.indexOf(m[1]!)];
        return sample ? `${sample.file}:${sample.line + Number(m[2]) - 1}: ${m[3]}` : l;
      });
    expect(errors).toEqual([]);
    rmSync(out, { recursive: true, force: true });
  }, 120_000);

  it.each(readdirSync(join(root, 'packages')).map((dir) => `packages/${dir}/README.md`))('%s: every sample declares what it uses (no hidden ts-context)', (file) => {
    const all = samples().filter((sample) => sample.file === file);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((sample) => sample.context.length > 0).map((sample) => `${file}:${sample.line}`)).toEqual([]);
    expect(readFileSync(join(root, file), 'utf8')).not.toContain('<!-- ts-context');
  });

  it.each(['README.md', ...publishedReadmes()])('%s: its `npm install` lines install every package its samples import', (file) => {
    const installed = npmInstalls(file);
    const missing = samples()
      .filter((sample) => sample.file === file)
      .flatMap((sample) => importedPackages(sample.code).filter((name) => !installed.includes(name)).map((name) => `${file}:${sample.line} imports ${name}`));
    expect(missing).toEqual([]);
  });

  it('the install and import scanners find what they must', () => {
    expect(importedPackages("import pg from 'pg';\nimport { bigint } from 'drizzle-orm/pg-core';\nimport type { X } from '@keyset/core/adapter';\nimport { a } from 'node:fs';\nconst m = await import('got');")).toEqual(['pg', 'drizzle-orm', '@keyset/core', 'got']);
  });

  it('never fall back to a secret written in the sample', () => {
    // `process.env.CURSOR_SECRET ?? 'dev-only-…'` runs as pasted and then signs cursors in
    // production with a secret everyone can read: the samples use cursorSecrets(), which
    // refuses to start without one outside development.
    const fallback = /\b[A-Z][A-Z0-9_]*(SECRET|PEPPER|KEY|TOKEN|PASSWORD)[A-Z0-9_]*\s*(\?\?|\|\|)\s*['"`]/;
    const offending = samples()
      .flatMap((s) => s.code.split('\n').map((line, i) => ({ where: `${s.file}:${s.line + i}`, line })))
      .filter(({ line }) => fallback.test(line))
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offending).toEqual([]);
  });
});
