#!/usr/bin/env node
// The request walk: which of keyset's source files one `GET /api/orders` with a key runs
// through, on each adapter, from the adapter's entry to the response.
//
//   node --import tsx scripts/request-walk.mjs [--markdown] [hono|express|fastify|fetch …]
//
// `--markdown` prints one table instead (every file on any walk, its code lines, and the
// lines each adapter's walk runs of it), as docs/architecture.md shows it.
//
// Each adapter serves the benchmark's orders app (bench/http/keyset-stacks.ts and
// fastify-stacks.ts: keyring on the memory store, GCRA limiter, guard, signed-cursor
// paginate bound to a `status` filter, sendPage) on a real node:http server, loaded from
// the TypeScript sources (tsx, with tsconfig.json's paths), so a covered range maps to a
// source file. After warm-up requests (the key cached, every lazy memo built), V8's precise
// coverage (call counts, block detail) is taken once to reset its counters, ONE request
// for the second page (a cursor in, a cursor out) is sent and its body read, and coverage
// is taken again: a file of `packages/*/src` is on the walk when any of its functions ran
// during that request. Frameworks, Node and the benchmark's own code are left out.
//
// Per file it prints the file's code lines (non-blank lines that are not only a comment:
// not starting with `//`, `/*` or `*`) and, of those, the lines in the functions that ran
// (whole bodies) and the lines that ran (the blocks V8 counted at least once; both
// source-mapped to the file). Nothing else of keyset runs in the process between the takes.
import { createServer } from 'node:http';
import inspector from 'node:inspector/promises';
import { SourceMap } from 'node:module';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const ADAPTERS = ['hono', 'express', 'fastify', 'fetch'];
const markdown = process.argv.includes('--markdown');
const wanted = process.argv.slice(2).filter((arg) => arg !== '--markdown');
for (const name of wanted) if (!ADAPTERS.includes(name)) throw new Error(`unknown adapter ${name} (have: ${ADAPTERS.join(', ')})`);
/** Test code, as the packages' `files` leave it out (test/source-rules.test.ts). */
const TEST_CODE = /(\.test\.ts|\.test-support\.ts|\.contract\.ts|\.bench\.ts)$|\/testing\//;

const session = new inspector.Session();
session.connect();
// Scripts by id, so that a covered script's generated text (and its inline source map) can be read.
const sources = new Map();
session.on('Debugger.scriptParsed', ({ params }) => {
  if (params.url.startsWith('file://') && /\/packages\/[^/]+\/src\//.test(params.url)) sources.set(params.scriptId, params.url);
});
await session.post('Debugger.enable');
await session.post('Profiler.enable');
// Before the code under measurement is loaded, so that every function of it is counted.
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

const { keysetHono, keysetExpress, keysetFetch } = await import('../bench/http/keyset-stacks.ts');
const { fastifyKeyset } = await import('../bench/http/fastify-stacks.ts');
const { getRequestListener } = await import('@hono/node-server');

/** The app of each adapter as a node:http listener, and a key it accepts. */
const apps = {
  hono: async () => {
    const { app, keys } = await keysetHono(undefined, 1);
    return { listener: getRequestListener(app.fetch), key: keys[0] };
  },
  express: async () => {
    const { app, keys } = await keysetExpress(1);
    return { listener: app, key: keys[0] };
  },
  fastify: async () => {
    const { listener, keys } = await fastifyKeyset(1);
    return { listener, key: keys[0] };
  },
  fetch: async () => {
    const { handler, keys } = await keysetFetch(1);
    return { listener: getRequestListener(handler), key: keys[0] };
  },
};

/** Code lines of a source text (0-based line numbers): non-blank, not only a comment. */
function codeLines(text) {
  const lines = new Set();
  text.split('\n').forEach((line, n) => {
    if (!/^\s*$|^\s*(\/\/|\/\*|\*)/.test(line)) lines.add(n);
  });
  return lines;
}

/**
 * The lines of a file's original source that ranges counted at least once cover: every
 * range (`blocks`: the branches and blocks that ran), or each function's own range only
 * (the whole body of a function that ran, less the functions nested in it that did not).
 */
function executedLines(generated, functions, blocks) {
  const match = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/.exec(generated);
  if (match === null) throw new Error('a source file loaded without an inline source map: run with --import tsx');
  const map = new SourceMap(JSON.parse(Buffer.from(match[1], 'base64').toString('utf8')));
  // Each offset takes the count of the innermost range holding it (ranges nest; outer first).
  const counts = new Int32Array(generated.length);
  const ranges = functions.flatMap((fn) => (blocks ? fn.ranges : fn.ranges.slice(0, 1))).sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  for (const range of ranges) counts.fill(range.count, range.startOffset, Math.min(range.endOffset, generated.length));
  const lines = new Set();
  let line = 0;
  let column = 0;
  for (let offset = 0; offset < match.index; offset++) {
    const char = generated[offset];
    if (char === '\n') {
      line++;
      column = 0;
      continue;
    }
    if (counts[offset] > 0 && char !== ' ' && char !== '\t') {
      const entry = map.findEntry(line, column);
      if (entry.originalLine !== undefined) lines.add(entry.originalLine);
    }
    column++;
  }
  return lines;
}

/** Keyset source files any function of which ran since the last take, with their line figures. */
async function walkSinceLastTake() {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = [];
  for (const script of result) {
    if (!sources.has(script.scriptId) || TEST_CODE.test(script.url)) continue;
    if (!script.functions.some((fn) => fn.ranges[0].count > 0)) continue;
    const path = fileURLToPath(script.url);
    const code = codeLines(readFileSync(path, 'utf8'));
    const { scriptSource } = await session.post('Debugger.getScriptSource', { scriptId: script.scriptId });
    const ran = [...executedLines(scriptSource, script.functions, true)].filter((n) => code.has(n));
    const inFunctions = [...executedLines(scriptSource, script.functions, false)].filter((n) => code.has(n));
    files.push({ file: relative(root, path), code: code.size, inFunctions: inFunctions.length, ran: ran.length });
  }
  return files.sort((a, b) => a.file.localeCompare(b.file));
}

/** GET `path` with the key; resolves with the status and parsed body once the body is read. */
async function get(origin, path, key) {
  const response = await fetch(origin + path, { headers: { authorization: `ApiKey ${key}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} → ${response.status} ${text}`);
  return JSON.parse(text);
}

const format = (n) => n.toLocaleString('en-US');
const walks = [];
for (const adapter of wanted.length > 0 ? wanted : ADAPTERS) {
  const { listener, key } = await apps[adapter]();
  const server = createServer(listener);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  // Warm-up: the key verified and cached, the filter's fingerprint memoised, each path taken once.
  let next = null;
  for (let i = 0; i < 5; i++) next = (await get(origin, '/api/orders?limit=20', key)).nextCursor;
  for (let i = 0; i < 5; i++) await get(origin, `/api/orders?limit=20&cursor=${encodeURIComponent(next)}`, key);
  await new Promise((resolve) => setImmediate(resolve));

  await walkSinceLastTake();
  const page = await get(origin, `/api/orders?limit=20&cursor=${encodeURIComponent(next)}`, key);
  // What a framework does after the last byte (finish hooks) runs before the second take.
  await new Promise((resolve) => setImmediate(resolve));
  const files = await walkSinceLastTake();
  if (page.items.length !== 20) throw new Error(`${adapter}: the page has ${page.items.length} items`);
  await new Promise((resolve) => server.close(resolve));
  walks.push({ adapter, files });
}

const total = (files, field) => files.reduce((sum, f) => sum + f[field], 0);
if (markdown) {
  const names = { hono: 'Hono', express: 'Express', fastify: 'Fastify', fetch: 'Fetch' };
  const all = new Map();
  for (const { files } of walks) for (const f of files) all.set(f.file, f.code);
  console.log(`| file | code lines | ${walks.map((w) => names[w.adapter]).join(' | ')} |`);
  console.log(`|---|--:|${walks.map(() => '--:').join('|')}|`);
  for (const [file, code] of [...all].sort(([a], [b]) => a.localeCompare(b))) {
    const cells = walks.map(({ files }) => files.find((f) => f.file === file)?.ran ?? '');
    console.log(`| \`${file.replace(/^packages\//, '')}\` | ${code} | ${cells.join(' | ')} |`);
  }
  console.log(`| **files** | | ${walks.map((w) => `**${w.files.length}**`).join(' | ')} |`);
  console.log(`| **code lines of those files** | | ${walks.map((w) => `**${format(total(w.files, 'code'))}**`).join(' | ')} |`);
  console.log(`| **code lines of the functions run** | | ${walks.map((w) => `**${format(total(w.files, 'inFunctions'))}**`).join(' | ')} |`);
  console.log(`| **lines run** | | ${walks.map((w) => `**${format(total(w.files, 'ran'))}**`).join(' | ')} |`);
} else {
  for (const { adapter, files } of walks) {
    console.log(
      `\n${adapter}: ${files.length} files, ${format(total(files, 'code'))} code lines in them, ${format(total(files, 'inFunctions'))} in the functions run, ${format(total(files, 'ran'))} run`,
    );
    const width = Math.max(...files.map((f) => f.file.length));
    console.log(`  ${'file'.padEnd(width)}  code  in functions run  run`);
    for (const f of files) console.log(`  ${f.file.padEnd(width)}  ${String(f.code).padStart(4)}  ${String(f.inFunctions).padStart(17)}  ${String(f.ran).padStart(3)}`);
  }
}
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
