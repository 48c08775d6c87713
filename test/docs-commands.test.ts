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
 *   `vitest list --filesOnly …` selects, which must not be none: the runs themselves take
 *   minutes, and CI runs the whole suite).
 * - Blocks run here run as written in bash (`-euo pipefail`), each page's blocks in order in
 *   one shell (later blocks use the variables of earlier ones), against an example on
 *   PostgreSQL (so the key CLI works beside the running server, as the docs say), with the
 *   page's placeholders made real (see PLACEHOLDERS). `npx -y pnpm@10.34.9 keys|start`
 *   run the root script's own command, read from package.json: pnpm itself adds 10-15 s
 *   a line on a busy machine and nothing else (examples/orders-api/test/commands.test.ts
 *   runs the `npx -y pnpm@10.34.9` form itself). A `start` runs until the server logs that
 *   it listens, then gets Ctrl-C and must exit 0. Every `curl` must get an answer below 500.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELP } from '../examples/orders-api/src/cli.ts';
import { call, createDatabase, dropDatabase, startApi, tempDir, type TestApi } from '../examples/orders-api/test/helpers.ts';

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

/** A shell block of a page, with the marker on the line above it, if any. */
interface ShellBlock {
  file: string;
  /** Line of the opening fence (1-based). */
  line: number;
  code: string;
  marker?: { kind: 'illustrative' | 'cheaper'; reason: string };
}

/** Every ```sh / ```bash / ```shell / ```console block of the shipped pages, in page order. */
function shellBlocks(): ShellBlock[] {
  const found: ShellBlock[] = [];
  for (const file of markdownFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = /^(`{3,})(\S*)/.exec(lines[i]!);
      if (fence === null) continue;
      let end = i + 1;
      while (end < lines.length && !lines[end]!.startsWith(fence[1]!)) end++;
      if (/^(sh|bash|shell|console)$/.test(fence[2]!)) {
        const above = /^<!-- (illustrative|cheaper): (.+?) -->$/.exec(lines[i - 1] ?? '');
        const block: ShellBlock = { file, line: i + 1, code: lines.slice(i + 1, end).join('\n') };
        if (above !== null) block.marker = { kind: above[1] as 'illustrative' | 'cheaper', reason: above[2]! };
        found.push(block);
      }
      i = end;
    }
  }
  return found;
}

/**
 * Blocks another test runs, reading them from the page: the page, how the block starts,
 * and the test.
 */
const RUN_ELSEWHERE: ReadonlyArray<{ file: string; starts: string; test: string; via?: string }> = [
  { file: 'README.md', starts: 'npx -y pnpm@10.34.9 install --filter-prod', test: 'test/readme-first-install.test.ts' },
  // The same block word for word (checked below), read by that test from the README.
  { file: 'docs/getting-started.md', starts: 'npx -y pnpm@10.34.9 install --filter-prod', test: 'test/readme-first-install.test.ts', via: 'README.md' },
  { file: 'README.md', starts: 'ADMIN_KEY=$(cat examples/orders-api/.data/admin.key)\n\n# Issue a key', test: 'test/readme-quickstart.test.ts' },
  { file: 'docs/getting-started.md', starts: 'npx -y pnpm@10.34.9 pack:fresh', test: 'test/pack-fresh.test.ts' },
  // A published package's README steps, run in the project its samples run in.
  { file: 'packages/prisma/README.md', starts: 'npx prisma generate', test: 'test/pack-install.test.ts' },
];

/** The test that runs `block`, if another one does. */
function elsewhere(block: ShellBlock): { test: string; page: string } | undefined {
  const entry = RUN_ELSEWHERE.find((e) => e.file === block.file && block.code.startsWith(e.starts));
  return entry === undefined ? undefined : { test: entry.test, page: entry.via ?? entry.file };
}

/** A page's text for a placeholder, and what a block run here gets instead. */
interface Real {
  url: string;
  dataDir: string;
  scratch: string;
  keyId: string;
  databaseUrl: string;
}
const PLACEHOLDERS: ReadonlyArray<readonly [string, (real: Real) => string]> = [
  ['http://127.0.0.1:3000', (real) => real.url],
  ['examples/orders-api/.data/admin.key', (real) => join(real.dataDir, 'admin.key')],
  ['/tmp/quickstart-key.json', (real) => join(real.scratch, 'quickstart-key.json')],
  ['key_7uW…', (real) => real.keyId],
  ["DATABASE_URL='postgres://orders:…@db.internal:5432/orders'", (real) => `DATABASE_URL='${real.databaseUrl}'`],
  ['DATABASE_URL=…', (real) => `DATABASE_URL='${real.databaseUrl}'`],
];

/** Commands this test never runs as written: installs, test runs, benchmarks, mutation runs. */
const EXPENSIVE = /npx -y pnpm@10\.34\.9 (install|test|pack:all|bench|mutate)\b|\bnpm install\b|\bnpx vitest\b|\bperf record\b|\bbench\/|\bgit worktree\b/;

describe('every shell block of the docs runs, or says why not', () => {
  const blocks = shellBlocks();

  it('finds the blocks (fences of three or more backticks, sh/bash/shell/console)', () => {
    expect(blocks.length).toBeGreaterThan(30);
    expect(blocks.some((b) => b.file === 'docs/usage.md' && b.code.includes('keys usage'))).toBe(true);
  });

  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))('%s: run here, run by a named test, or marked with a reason', (_where, block) => {
    const other = elsewhere(block);
    if (other !== undefined) {
      expect(block.marker, 'a block another test runs needs no marker').toBeUndefined();
      expect(existsSync(join(root, other.test)), other.test).toBe(true);
      // That test reads the block from the page.
      expect(readFileSync(join(root, other.test), 'utf8')).toContain(other.page.split('/').pop()!);
      return;
    }
    if (block.marker !== undefined) {
      expect(block.marker.reason.length, 'the reason beside the marker').toBeGreaterThan(20);
      if (block.marker.kind === 'cheaper') expect(block.code).toMatch(/npx vitest run/);
      return;
    }
    // Run here: nothing in it this test cannot run as written.
    expect(block.code, 'an install, a test run, a benchmark or a mutation run: mark it, with the reason').not.toMatch(EXPENSIVE);
  });

  it('getting-started.md gives the README\'s first command word for word (test/readme-first-install.test.ts runs it from the README)', () => {
    const first = (file: string): string => blocks.find((b) => b.file === file && b.code.startsWith('npx -y pnpm@10.34.9 install --filter-prod'))!.code;
    expect(first('docs/getting-started.md')).toBe(first('README.md'));
  });
});

/**
 * Bash functions a block runs with: `npx -y pnpm@10.34.9 keys|start` as the root scripts
 * run them (read from package.json), a `start` served until it listens and then stopped
 * with Ctrl-C, `curl` reporting each status on stderr, and in a `cheaper` block
 * `npx vitest run …` as `vitest list --filesOnly …`. Anything else runs as written.
 */
function shims(): string {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const command = (name: string): string => scripts[name]!.replace(/^exec /, '');
  return `
__serve() {
  local log; log=$(mktemp)
  ${command('start')} >"$log" 2>&1 &
  local pid=$!
  until grep -q '"orders API listening"' "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then cat "$log" >&2; echo "@@start exited before listening" >&2; return 1; fi
    sleep 0.2
  done
  grep -o '"adapter":"[a-z]*"' "$log" | head -1 >&2
  kill -INT "$pid"
  local code=0; wait "$pid" || code=$?
  echo "@@start stopped by Ctrl-C: exit $code" >&2
  rm -f "$log"
  return "$code"
}
npx() {
  if [ "\${1:-}" = -y ] && [ "\${2:-}" = pnpm@10.34.9 ]; then
    shift 2
    if [ "\${1:-}" = --silent ]; then shift; fi
    case "\${1:-}" in
      keys) shift; ${command('keys')} "$@" ;;
      start) shift; [ "$#" -eq 0 ] && __serve ;;
      *) echo "@@not run here: npx -y pnpm@10.34.9 $*" >&2; return 97 ;;
    esac
  elif [ "\${1:-}" = vitest ] && [ "\${2:-}" = run ] && [ -n "\${__cheaper:-}" ]; then
    shift 2
    local files; files=$(command npx vitest list --filesOnly "$@")
    [ -n "$files" ] || { echo "@@vitest run $* selects no test file" >&2; return 1; }
    echo "@@vitest run $* selects $(printf '%s\n' "$files" | wc -l) files" >&2
  else
    command npx "$@"
  fi
}
curl() { command curl -w '%{stderr}@@curl %{http_code}\n' "$@"; }
`;
}

/** A page's blocks run here, as one script: placeholders made real, `cheaper` blocks flagged. */
function pageScript(file: string, real: Real): string {
  const parts = shellBlocks()
    .filter((b) => b.file === file && elsewhere(b) === undefined && b.marker?.kind !== 'illustrative')
    .map((b) => {
      const code = PLACEHOLDERS.reduce((text, [placeholder, value]) => text.replaceAll(placeholder, value(real)), b.code);
      return b.marker?.kind === 'cheaper' ? `__cheaper=1\n${code}\nunset __cheaper` : code;
    });
  return `${shims()}\n${parts.join('\n')}\n`;
}

/** The pages with blocks run here. */
const pagesToRun = [...new Set(shellBlocks().filter((b) => elsewhere(b) === undefined && b.marker?.kind !== 'illustrative').map((b) => b.file))];

const serverUrl = await postgresUrl();

describe.skipIf(serverUrl === undefined)('shell blocks run as written against a started example (PostgreSQL)', () => {
  const database = `docs_commands_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let t: TestApi;
  let real: Real;

  beforeAll(async () => {
    const databaseUrl = await createDatabase(serverUrl!, database);
    t = await startApi({ databaseUrl, seedOrders: 300 });
    // The key the pages' `key_7uW…` stands for.
    const issued = await call(t.api.url, '/api/keys', { key: t.api.adminKey, method: 'POST', body: { name: 'docs-cli', scopes: ['orders:read'] } });
    expect(issued.status, issued.text).toBe(201);
    real = { url: t.api.url, dataDir: t.dataDir, scratch: tempDir('docs-commands-'), keyId: (issued.body as { id: string }).id, databaseUrl };
  }, 120_000);

  afterAll(async () => {
    await t?.stop({ remove: true });
    if (real !== undefined) rmSync(real.scratch, { recursive: true, force: true });
    await dropDatabase(serverUrl!, database);
  });

  it('runs the blocks of the pages that have them', () => {
    expect(pagesToRun).toEqual(expect.arrayContaining(['docs/getting-started.md', 'docs/usage.md', 'docs/deployment.md', 'examples/orders-api/README.md']));
  });

  it('getting-started.md\'s other ways to run the key CLI (`npm run …`, `node …`) print the same JSON key list', async () => {
    const guide = readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8');
    const ways = ['npm run --silent keys -- list --json', 'node --import tsx examples/orders-api/src/cli.ts list --json'];
    for (const way of ways) expect(guide).toContain(`\`${way}\``);
    const { CI: _ci, NODE_ENV: _n, ...inherited } = process.env;
    const run = (command: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const child = spawn('bash', ['-euo', 'pipefail', '-c', command], { cwd: root, env: { ...inherited, DATABASE_URL: real.databaseUrl, DATA_DIR: real.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (out += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
        child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command}: exit ${code}\n${err}`))));
      });
    const [viaNpm, viaNode] = await Promise.all(ways.map(run));
    const listed = JSON.parse(viaNode!) as Array<{ id: string }>;
    expect(listed.map((key) => key.id)).toContain(real.keyId);
    expect(JSON.parse(viaNpm!)).toEqual(listed);
  }, 120_000);

  it.each(pagesToRun)('%s', async (file) => {
    const script = pageScript(file, real);
    const { CI: _ci, NODE_ENV: _n, ...inherited } = process.env;
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: root,
      env: { ...inherited, DATABASE_URL: real.databaseUrl, DATA_DIR: real.dataDir, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const report = `${file}: exit ${code}\n--- stderr\n${err.slice(-4000)}\n--- stdout\n${out.slice(-3000)}`;
    expect(code, report).toBe(0);
    const statuses = [...err.matchAll(/^@@curl (\d{3})$/gm)].map((m) => Number(m[1]));
    expect(statuses.filter((status) => status === 0 || status >= 500), report).toEqual([]);
    expect(err).not.toMatch(/@@not run here/);
    // What ran: every `start` served and stopped cleanly, on the adapter the line names.
    const starts = [...script.matchAll(/^(?:[A-Z_]+=\S+ )*npx -y pnpm@10\.34\.9 start\b/gm)];
    expect([...err.matchAll(/^@@start stopped by Ctrl-C: exit 0$/gm)], report).toHaveLength(starts.length);
    for (const [line] of starts) {
      const adapter = /ADAPTER=(\w+)/.exec(line)?.[1];
      if (adapter !== undefined) expect(err).toContain(`"adapter":"${adapter}"`);
    }
    if (/^curl |\$\(curl |\| *curl /m.test(script)) expect(statuses.length, report).toBeGreaterThan(0);
  }, 300_000);
});

/**
 * Commands named in running text (`npx -y pnpm@10.34.9 bench cursor`, `keys peppers`,
 * `node scripts/package-metadata.mjs`) are references, not steps to run here; each must
 * still name what exists: a root script or pnpm command, a benchmark, a key CLI command,
 * a file.
 */
describe('commands named in the docs exist', () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  /** pnpm's own commands the docs use (install, exec, pack), beside the root scripts. */
  const PNPM_COMMANDS = new Set(['install', 'exec', 'pack']);
  /** The key CLI's commands, from its help: `create`, `owners create`, … */
  const cliCommands = new Set(
    HELP.split('\n').flatMap((line) => [...line.matchAll(/(?:^ {2}|\| )((?:owners )?[a-z]+)\b/g)].map((m) => m[1]!)),
  );
  const code = markdownFiles().flatMap((file) => codeOf(readFileSync(join(root, file), 'utf8')).map((text) => ({ file, text })));

  it('reads the key CLI\'s commands from its help', () => {
    expect([...cliCommands]).toEqual(expect.arrayContaining(['create', 'list', 'usage', 'peppers', 'owners create', 'owners delete']));
  });

  it('every `npx -y pnpm@10.34.9 <name>` is a root script or a pnpm command', () => {
    const unknown = code.flatMap(({ file, text }) =>
      [...text.matchAll(/npx -y pnpm@10\.34\.9 (?:--silent )?([a-z][\w:-]*)/g)].map((m) => m[1]!).filter((name) => !(name in scripts) && !PNPM_COMMANDS.has(name)).map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every `bench <name>` is a benchmark in bench/', () => {
    const unknown = code.flatMap(({ file, text }) =>
      [...text.matchAll(/pnpm@10\.34\.9 bench ([a-z][\w-]*)/g)].map((m) => m[1]!).filter((name) => !existsSync(join(root, 'bench', `${name}.bench.ts`))).map((name) => `${file}: bench ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every `keys <command>` is a command of the key CLI', () => {
    const unknown = code.flatMap(({ file, text }) =>
      [...text.matchAll(/(?:^|pnpm@10\.34\.9 (?:--silent )?|`)keys ((?:owners )?[a-z]+(?:\\?\|[a-z]+)*)/gm)]
        .flatMap((m) => {
          const [first, ...rest] = m[1]!.split(/\\?\|/);
          const owners = first!.startsWith('owners ') ? 'owners ' : '';
          return [first!, ...rest.map((name) => owners + name)];
        })
        .filter((name) => !cliCommands.has(name))
        .map((name) => `${file}: keys ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every file a `node …` command runs exists', () => {
    const missing = code.flatMap(({ file, text }) =>
      [...text.matchAll(/\bnode (?:--[\w-]+(?:=\S+)? |--import \S+ )*((?:[\w.-]+\/)+[\w.-]+\.(?:m?js|ts))/g)].map((m) => m[1]!).filter((path) => !existsSync(join(root, path))).map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });
});
