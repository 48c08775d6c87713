/**
 * Facts the docs state that the code decides, checked against the code so they cannot drift
 * (issue 23 item 10: the docs gave core's tarball as 231 KB when it was 431 KB, and two
 * tables where migrate() creates three). Each fact is a block the test generates, between
 * `<!-- generated:<name> -->` and `<!-- /generated:<name> -->`, or a list it compares:
 *
 * - docs/postgres.md `schema`: every table, column, constraint, index and function that
 *   `migrate()` creates, read from PostgreSQL's catalog after migrating a fresh PGlite;
 * - docs/packaging.md `tarballs`: each published package's packed and unpacked size and
 *   file count (`npm pack --dry-run`; needs built packages, skips otherwise); sizes may
 *   move 10% before the test asks for the table to be regenerated;
 * - docs/packaging.md `build-scripts` and pnpm-workspace.yaml: every installed dependency
 *   with a build script is either run (`onlyBuiltDependencies`) or skipped on purpose
 *   (`ignoredBuiltDependencies`), and the page lists the same decisions;
 * - docs/errors.md: one row per code of `ERROR_CATALOGUE`, with its status;
 * - docs/getting-started.md: every environment variable the example reads has a row, and
 *   each default the table gives is the example's (setting the variable to it changes nothing);
 * - every "migration N" / "schema version N" a page names: step N of `migrationSql()` is
 *   the first to add what the page says it adds, and no page states `SCHEMA_VERSION` as a
 *   number (it moves with every migration);
 * - docs/usage.md: the usage caps, retention defaults and the example's default ranges.
 *
 * `UPDATE_DOCS=1 npx vitest run test/docs-facts.test.ts` rewrites the generated blocks.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPglite } from '@keyset/test-support';
import { ERROR_CATALOGUE } from '@keyset/core';
import { MAX_USAGE_BUCKETS, usageRetention } from '@keyset/core/adapter';
import { SCHEMA_VERSION, migrate, migrationSql } from '@keyset/postgres';
import { DEFAULT_USAGE_BUCKETS } from '../examples/orders-api/src/app/usage-admin.ts';
import { loadConfig } from '../examples/orders-api/src/config.ts';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const UPDATE = process.env.UPDATE_DOCS === '1';
const run = promisify(execFile);

const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The text between a generated block's markers, and the page with `text` put there instead. */
function generated(file: string, name: string): { current: string; replace(text: string): string } {
  const page = read(file);
  const open = `<!-- generated:${name} `;
  const start = page.indexOf(open);
  const close = page.indexOf(`<!-- /generated:${name} -->`);
  if (start < 0 || close < start) throw new Error(`${file} has no generated:${name} block`);
  const from = page.indexOf('-->\n', start) + 4;
  return { current: page.slice(from, close), replace: (text) => page.slice(0, from) + text + page.slice(close) };
}

/** Checks (or with UPDATE_DOCS=1 rewrites) a generated block. */
function expectBlock(file: string, name: string, text: string, same: (current: string) => void = (current) => expect(current).toBe(text)): void {
  const block = generated(file, name);
  if (UPDATE) {
    writeFileSync(join(root, file), block.replace(text));
    return;
  }
  try {
    same(block.current);
  } catch (error) {
    throw new Error(`${file} generated:${name} is out of date: run UPDATE_DOCS=1 npx vitest run test/docs-facts.test.ts\n${String(error)}`);
  }
}

describe('docs/postgres.md: what migrate() creates', () => {
  it('the schema block is what PostgreSQL holds after migrate() on a fresh database', async () => {
    const db = await createPglite();
    try {
      await migrate(db);
      const columns = await db.query<{ table: string; column: string; type: string; notnull: boolean; def: string | null; identity: string }>(`
        SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
          pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity AS identity
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'keyset\\_%'
        ORDER BY c.relname, a.attnum`);
      const constraints = await db.query<{ table: string; def: string }>(`
        SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text LIKE 'keyset\\_%' AND contype <> 'n'
        ORDER BY conrelid::regclass::text, contype DESC, conname`);
      const indexes = await db.query<{ table: string; def: string }>(`
        SELECT i.indrelid::regclass::text AS table, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
        WHERE i.indrelid::regclass::text LIKE 'keyset\\_%' AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
        ORDER BY 1, 2`);
      const functions = await db.query<{ signature: string; result: string }>(`
        SELECT p.oid::regprocedure::text AS signature, pg_get_function_result(p.oid) AS result FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'keyset\\_%' ORDER BY 1`);
      const lines: string[] = [];
      for (const table of [...new Set(columns.rows.map((c) => c.table))]) {
        lines.push(`${table} (`);
        for (const c of columns.rows.filter((row) => row.table === table)) {
          const extra = [c.notnull ? 'NOT NULL' : '', c.identity === 'a' ? 'GENERATED ALWAYS AS IDENTITY' : '', c.def === null ? '' : `DEFAULT ${c.def}`].filter(Boolean).join(' ');
          lines.push(`  ${c.column} ${c.type}${extra === '' ? '' : ` ${extra}`}`);
        }
        for (const k of constraints.rows.filter((row) => row.table === table)) lines.push(`  ${k.def}`);
        lines.push(')');
        for (const i of indexes.rows.filter((row) => row.table === table)) lines.push(i.def.replace(/ ON public\.\S+ USING btree/, ''));
        lines.push('');
      }
      for (const f of functions.rows) lines.push(`FUNCTION ${f.signature} RETURNS ${f.result}`);
      expectBlock('docs/postgres.md', 'schema', `\`\`\`text\n${lines.join('\n')}\n\`\`\`\n`);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('states no schema version by number outside the generated block (it would drift)', () => {
    expect(SCHEMA_VERSION).toBeGreaterThan(0);
    expect(read('docs/postgres.md')).not.toMatch(/currently \d+\)/);
  });
});

const published = readdirSync(join(root, 'packages'))
  .map((dir) => ({ dir, manifest: JSON.parse(read(join('packages', dir, 'package.json'))) as { name: string; private?: boolean } }))
  .filter(({ manifest }) => manifest.private !== true);
const unbuilt = published.filter(({ dir }) => !existsSync(join(root, 'packages', dir, 'dist', 'index.js')));

describe('docs/packaging.md: tarball sizes', () => {
  it.skipIf(unbuilt.length > 0)('the table gives each package as npm packs it (sizes within 10%)', async () => {
    const sizes: Array<{ name: string; size: number; unpackedSize: number; entryCount: number }> = [];
    // Three at a time: each `npm pack --dry-run` is a Node process reading every file.
    for (let i = 0; i < published.length; i += 3) {
      const batch = published.slice(i, i + 3).map(async ({ dir }) => {
        const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: join(root, 'packages', dir), env: { ...process.env, npm_config_update_notifier: 'false' } });
        return (JSON.parse(stdout) as Array<{ name: string; size: number; unpackedSize: number; entryCount: number }>)[0]!;
      });
      sizes.push(...(await Promise.all(batch)));
    }
    sizes.sort((a, b) => a.name.localeCompare(b.name));
    const kB = (n: number): string => (n >= 1_000_000 ? `${(n / 1_000_000).toFixed(2)} MB` : `${Math.round(n / 1000)} kB`);
    const table = ['| package | packed | unpacked | files |', '|---|---|---|---|', ...sizes.map((s) => `| \`${s.name}\` | ${kB(s.size)} | ${kB(s.unpackedSize)} | ${s.entryCount} |`)].join('\n');
    expectBlock('docs/packaging.md', 'tarballs', `${table}\n`, (current) => {
      const rows = current.split('\n').filter((line) => line.startsWith('| `'));
      expect(rows.map((row) => row.split('|')[1]!.trim().replaceAll('`', ''))).toEqual(sizes.map((s) => s.name));
      const bytes = (text: string): number => {
        const [value, unit] = text.trim().split(' ');
        return Number(value) * (unit === 'MB' ? 1_000_000 : 1000);
      };
      for (const [i, row] of rows.entries()) {
        const [, , packed, unpacked, files] = row.split('|');
        const actual = sizes[i]!;
        expect(Math.abs(bytes(packed!) / actual.size - 1), `${actual.name} packed: docs ${packed!.trim()}, now ${kB(actual.size)}`).toBeLessThanOrEqual(0.1);
        expect(Math.abs(bytes(unpacked!) / actual.unpackedSize - 1), `${actual.name} unpacked: docs ${unpacked!.trim()}, now ${kB(actual.unpackedSize)}`).toBeLessThanOrEqual(0.1);
        expect(Math.abs(Number(files) / actual.entryCount - 1), `${actual.name} files`).toBeLessThanOrEqual(0.1);
      }
    });
  }, 300_000);
});

/** A list of package names under `key:` in pnpm-workspace.yaml. */
function workspaceList(key: string): string[] {
  const yaml = read('pnpm-workspace.yaml');
  const match = new RegExp(`^${key}:\\n((?:  - .+\\n)*)`, 'm').exec(yaml);
  return match === null ? [] : match[1]!.split('\n').filter(Boolean).map((line) => line.replace(/^ {2}- /, '').replace(/^["']|["']$/g, ''));
}

/** Every installed package (by name) whose package.json asks for a build at install time. */
function packagesWithBuildScripts(): string[] {
  const store = join(root, 'node_modules', '.pnpm');
  const names = new Set<string>();
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, 'node_modules');
    if (!existsSync(modules)) continue;
    // The package of this store entry: `name@version…` or `@scope+name@version…`, peers after `_`.
    const name = /^(?:@[^+]+\+)?[^@]+/.exec(entry)![0].replace('+', '/');
    const dir = join(modules, name);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const { scripts = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    if (scripts.preinstall || scripts.install || scripts.postinstall || existsSync(join(dir, 'binding.gyp'))) names.add(name);
  }
  return [...names].sort();
}

describe('dependency build scripts: decided in pnpm-workspace.yaml, stated in docs/packaging.md', () => {
  it('every installed package with a build script is either run or ignored on purpose, and the page says which', () => {
    const runs = workspaceList('onlyBuiltDependencies');
    const ignored = workspaceList('ignoredBuiltDependencies');
    expect(runs.filter((name) => ignored.includes(name))).toEqual([]);
    expect([...runs, ...ignored].sort()).toEqual(packagesWithBuildScripts());
    const { current } = generated('docs/packaging.md', 'build-scripts');
    const rows = current.split('\n').filter((line) => line.startsWith('| `'));
    const decided = rows.map((row) => {
      const [, name, decision] = row.split('|').map((cell) => cell.trim());
      return [name!.replaceAll('`', ''), decision] as const;
    });
    expect(decided.map(([name]) => name).sort()).toEqual([...runs, ...ignored].sort());
    for (const [name, decision] of decided) expect(decision, name).toBe(runs.includes(name) ? 'runs' : 'skipped');
  });
});

describe('docs/errors.md: the error catalogue', () => {
  it('has one row per code with its status, and no other code', () => {
    const rows = read('docs/errors.md')
      .split('\n')
      .map((line) => /^\| (\d{3}) \| `([a-z_]+)` \|/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[2]!, Number(m[1])] as const);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, { status }]) => [code, status])));
    expect(rows).toHaveLength(Object.keys(ERROR_CATALOGUE).length);
  });
});

describe('docs/getting-started.md: the example\'s environment variables', () => {
  it('each default the table gives is the example\'s: setting the variable to it changes nothing', () => {
    const rows = read('docs/getting-started.md')
      .split('\n')
      .map((line) => /^\| `([A-Z][A-Z0-9_]*)` \| `([^`]*)` \|/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null);
    expect(rows.length).toBeGreaterThan(15);
    // DATA_DIR's default is relative to the directory the command runs in: the repository root.
    expect(process.cwd()).toBe(root.replace(/\/$/, ''));
    const defaults = loadConfig({});
    for (const [, name, value] of rows) expect(loadConfig({ [name!]: value! }), `${name}=${value}`).toEqual(defaults);
  });

  it('every variable the example reads is in the table', () => {
    // What loadConfig reads itself (aliases, pairs), and each variable of its ENV_SCHEMAS table.
    const config = read('examples/orders-api/src/config.ts');
    const schemas = read('examples/orders-api/src/config-schema.ts');
    const named = [...config.matchAll(/\bread\('([A-Z][A-Z0-9_]*)'\)/g), ...schemas.matchAll(/^ {2}([A-Z][A-Z0-9_]*): \['/gm)];
    const variables = [...new Set(named.map((m) => m[1]!))].sort();
    expect(variables.length).toBeGreaterThan(10);
    const table = read('docs/getting-started.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .join('\n');
    expect(variables.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});

/** Every Markdown page the repository ships: README.md, docs/*.md, packages/* and examples/* READMEs. */
function pages(): string[] {
  const readmes = (dir: string): string[] =>
    readdirSync(join(root, dir))
      .map((name) => join(dir, name, 'README.md'))
      .filter((file) => existsSync(join(root, file)));
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)), ...readmes('packages'), ...readmes('examples')];
}

/**
 * What each page says a numbered migration adds: text of that step's SQL (default schema
 * and prefix). A page that names a migration by number must be listed here, so the claim
 * is checked; a number that is not is a failure naming the page.
 */
const MIGRATION_CLAIMS: Record<string, Record<number, string[]>> = {
  'docs/api-keys.md': {
    5: ['ADD COLUMN IF NOT EXISTS prefix'],
    7: ['"keyset_secrets" ADD COLUMN IF NOT EXISTS pepper_id', 'p_pepper_id text'],
    9: ['ADD COLUMN IF NOT EXISTS leaked_at'],
    13: ['ADD COLUMN IF NOT EXISTS incarnation'],
  },
  'docs/audit.md': { 11: ['CREATE TABLE IF NOT EXISTS "public"."keyset_audit"'] },
  'docs/postgres.md': {
    // The rotation function of version 2, replaced: the current secret is the newest still live.
    3: ['ORDER BY created_at DESC, seq DESC'],
    8: ['CREATE TABLE IF NOT EXISTS "public"."keyset_owners"'],
    10: ['"keyset_owners" ADD COLUMN IF NOT EXISTS quota'],
    12: ['CREATE TABLE IF NOT EXISTS "public"."keyset_usage"'],
    13: ['ADD COLUMN IF NOT EXISTS incarnation', 'FUNCTION "public"."keyset_delete_owner"('],
    14: ['CREATE TABLE IF NOT EXISTS "public"."keyset_usage_flushes"', 'keyset_usage_coarse_idx'],
  },
  'docs/rate-limits.md': {
    4: ['FUNCTION "public"."keyset_spend_quota"('],
    6: ['ADD COLUMN IF NOT EXISTS rate_limits'],
    8: ['CREATE TABLE IF NOT EXISTS "public"."keyset_owners"', 'ADD COLUMN IF NOT EXISTS owner_id'],
    10: ['"keyset_owners" ADD COLUMN IF NOT EXISTS quota', 'FUNCTION "public"."keyset_spend_quotas"('],
  },
  'docs/security.md': { 9: ['ADD COLUMN IF NOT EXISTS leaked_at', 'ADD COLUMN IF NOT EXISTS leak_url'] },
};

describe('migration numbers the docs give', () => {
  /** Each version's SQL, as `migrationSql()` writes it, whitespace collapsed. */
  const steps = new Map(
    [...migrationSql().matchAll(/WHERE version = (\d+)\) THEN([\s\S]*?)INSERT INTO/g)].map((m) => [Number(m[1]), m[2]!.replace(/\s+/g, ' ')] as const),
  );

  it('every page that names a migration or schema version by number is checked below', () => {
    const named: Record<string, number[]> = {};
    for (const file of pages()) {
      const versions = [...read(file).matchAll(/\b(?:migration|schema version)\s+(\d+)/gi)].map((m) => Number(m[1]));
      if (versions.length > 0) named[file] = [...new Set(versions)].sort((a, b) => a - b);
    }
    const listed = Object.fromEntries(Object.entries(MIGRATION_CLAIMS).map(([file, claims]) => [file, Object.keys(claims).map(Number)]));
    expect(named).toEqual(listed);
  });

  it('step N is the first to add what the page says migration N adds', () => {
    expect(Math.max(...steps.keys())).toBe(SCHEMA_VERSION);
    for (const [file, claims] of Object.entries(MIGRATION_CLAIMS)) {
      for (const [version, texts] of Object.entries(claims)) {
        for (const text of texts) {
          const first = [...steps].find(([, sql]) => sql.includes(text))?.[0];
          expect(first, `${file}: migration ${version} adds ${text}`).toBe(Number(version));
        }
      }
    }
  });

  it('no page states SCHEMA_VERSION as a number', () => {
    for (const file of pages()) expect(read(file), file).not.toMatch(/SCHEMA_VERSION`?\s+(?:is|=|:)\s*\d/);
  });
});

describe('docs/usage.md: caps, retention and default ranges', () => {
  const page = read('docs/usage.md').replace(/\s+/g, ' ');
  const n = (value: number): string => value.toLocaleString('en-US');

  it('gives the caps a read has', () => {
    const { minute, hour, day } = MAX_USAGE_BUCKETS;
    expect(page).toContain(`at most ${n(minute)} minutes, ${n(hour)} hours or ${n(day)} days`);
    expect(page).toContain(`(${n(minute)} minutes, ${n(hour)} hours, ${n(day)} days)`);
  });

  it('gives the retention a store keeps by default', () => {
    const { minute, hour, day } = usageRetention();
    const rows = Object.fromEntries([...read('docs/usage.md').matchAll(/^\| (minute|hour|day) \| (\d+) days? \|/gm)].map((m) => [m[1]!, Number(m[2])]));
    expect(rows).toEqual({ minute, hour, day });
  });

  it('gives the example\'s default ranges', () => {
    const { minute, hour, day } = DEFAULT_USAGE_BUCKETS;
    expect(page).toContain(`**${minute} minutes, ${hour} hours or ${day} days**`);
    expect(read('docs/getting-started.md')).toContain(`the last ${hour} hours by hour, ${minute} minutes by minute or ${day} days by day`);
  });
});
