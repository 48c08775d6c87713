/**
 * The four adapters have one shape: the same files, each small enough
 * to read in one sitting, none leaning on another adapter or on a framework's internals.
 *
 * - **The same file set**: `index.ts`, `api-key.ts`, `check-request.ts`, `paginate.ts`,
 *   `problem-handler.ts` (test code aside: `*.test.ts` and `testing/`), so that a fix in one
 *   adapter has an obvious place in the other three.
 * - **Under 400 lines** per adapter, counted plainly: every non-blank line of its non-test
 *   sources, comments and TSDoc included (`cat src/*.ts | grep -cv '^\s*$'`), so that
 *   plainer code, not thinner comments alone, keeps it small. Lines of code (non-comment)
 *   are printed beside it.
 * - **No adapter imports another adapter's package**, in its sources or its tests.
 * - **No framework internals** that adapters once used: Hono's `c.res = undefined` /
 *   `c.finalized` / `c.req.bodyCache` / `app.router.match()`, Express's router `stack`,
 *   and underscore members (`req._parsedUrl`).
 * - **The same public names**: every adapter exports `apiKey`, `checkRequest`,
 *   `paginate`, `sendPage`, `problemHandler` and `notFoundHandler`.
 * - **The same option names**: `apiKey()`, `paginate()` and `problemHandler()` know the
 *   same options on every adapter (docs/adapters.md, "Options"), and `notFoundHandler()`
 *   `typeBase` plus the one way its framework lists routes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const ADAPTERS = ['hono', 'express', 'fastify', 'fetch'] as const;
const TEST_CODE = /\.test\.ts$|(^|\/)testing\//;
const FILES = ['api-key.ts', 'check-request.ts', 'index.ts', 'paginate.ts', 'problem-handler.ts'];
const MAX_LINES = 400;

/** Every `.ts` file under `dir`, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const srcOf = (adapter: string): string => join(root, 'packages', adapter, 'src');
const sourcesOf = (adapter: string): string[] => files(srcOf(adapter)).filter((file) => !TEST_CODE.test(file));

/** Lines that hold at least one token that is not a comment (the TypeScript scanner decides). */
function codeLines(text: string): number {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest);
  const lines = new Set<number>();
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) continue;
    if (token === ts.SyntaxKind.WhitespaceTrivia || token === ts.SyntaxKind.NewLineTrivia) continue;
    const start = source.getLineAndCharacterOfPosition(scanner.getTokenStart()).line;
    const end = source.getLineAndCharacterOfPosition(scanner.getTokenEnd()).line;
    for (let line = start; line <= end; line++) lines.add(line);
  }
  return lines.size;
}

describe('adapter shape', () => {
  it.each(ADAPTERS)('%s has the common file set', (adapter) => {
    expect(sourcesOf(adapter)).toEqual(FILES);
  });

  it.each(ADAPTERS)(`%s has under ${MAX_LINES} non-blank lines, comments included`, (adapter) => {
    const texts = sourcesOf(adapter).map((file) => readFileSync(join(srcOf(adapter), file), 'utf8'));
    const code = texts.reduce((sum, text) => sum + codeLines(text), 0);
    const nonBlank = texts.reduce((sum, text) => sum + text.split('\n').filter((line) => line.trim() !== '').length, 0);
    console.info(`@keyset/${adapter}: ${nonBlank} non-blank lines, ${code} lines of code`);
    expect(nonBlank).toBeLessThan(MAX_LINES);
  });

  it.each(ADAPTERS)("%s imports no other adapter's package, in sources or tests", (adapter) => {
    const others = ADAPTERS.filter((other) => other !== adapter);
    const offending = files(srcOf(adapter)).filter((file) => {
      const text = readFileSync(join(srcOf(adapter), file), 'utf8');
      // `from '@keyset/express'`, `import('@keyset/express/…')`, or a relative path into its folder.
      return others.some((other) => new RegExp(`(from|import\\()\\s*'(@keyset/${other}(/[^']*)?|(\\.\\./)+${other}/[^']*)'`).test(text));
    });
    expect(offending).toEqual([]);
  });

  it.each(ADAPTERS)('%s uses no framework internals it once relied on', (adapter) => {
    const INTERNALS = [/\bc\.res\s*=\s*undefined/, /\.finalized\s*=/, /\bbodyCache\b/, /\b(req|res|request|reply|c)\._[A-Za-z]/, /\b_router\b/, /\.stack\b/, /\.router\.match\(/];
    const offending = sourcesOf(adapter).flatMap((file) => {
      const text = readFileSync(join(srcOf(adapter), file), 'utf8');
      return INTERNALS.filter((pattern) => pattern.test(text)).map((pattern) => `${file}: ${pattern}`);
    });
    expect(offending).toEqual([]);
  });

  it.each(ADAPTERS)('%s exports the common names', async (adapter) => {
    const exported = Object.keys(await import(`../packages/${adapter}/src/index.ts`));
    expect(exported).toEqual(expect.arrayContaining(['apiKey', 'checkRequest', 'paginate', 'sendPage', 'problemHandler', 'notFoundHandler']));
  });
});

/** The option names a factory knows, read from the error it throws for an unknown one. */
async function knownOptions(make: () => unknown): Promise<string[]> {
  let message = '';
  try {
    await make();
  } catch (error) {
    message = (error as Error).message;
  }
  const known = /known: (.*)\)$/.exec(message)?.[1];
  expect(known, message).toBeDefined();
  return [...known!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!).sort();
}

describe('adapter options', () => {
  const guard = { check: async () => ({ key: {} as never, headers: {}, clientAddress: undefined }) };
  const paginator = { plan: async () => ({}) as never, page: async () => ({ body: {}, headers: {} }) as never };
  const odd = { zzzzzzzzzzzzzzzz: 1 };

  it.each(ADAPTERS)('%s: apiKey(), paginate() and problemHandler() know the same options as every other adapter', async (adapter) => {
    const api = (await import(`../packages/${adapter}/src/index.ts`)) as Record<string, (...args: unknown[]) => unknown>;
    const web = adapter === 'fetch';
    expect(await knownOptions(() => api.apiKey!({ guard, ...odd }))).toEqual(['clientAddress', 'cost', 'guard', 'permissions', 'route', 'scopes']);
    expect(await knownOptions(() => (web ? api.paginate!(new Request('http://h/'), paginator, odd) : api.paginate!(paginator, odd)))).toEqual(['baseUrl', 'filters']);
    expect(await knownOptions(() => api.problemHandler!(odd))).toEqual(['onError', 'typeBase']);
  });

  it.each([
    ['hono', 'app'],
    ['express', 'routes'],
    ['fastify', undefined],
    ['fetch', 'allowedMethods'],
  ] as const)("%s: notFoundHandler() knows typeBase and its framework's way to list routes", async (adapter, routes) => {
    const api = (await import(`../packages/${adapter}/src/index.ts`)) as Record<string, (...args: unknown[]) => unknown>;
    expect(await knownOptions(() => api.notFoundHandler!(odd))).toEqual(routes === undefined ? ['typeBase'] : [routes, 'typeBase'].sort());
  });
});
