/**
 * Four rules of the packages' sources, checked on the code itself:
 *
 * - **No module-level `let` or `var`** in any package's `src/` outside test code. Per-call
 *   results are return values; memos live on the instance a factory made. Module variables
 *   are shared by every instance and every request in the process, and a result handed
 *   back through one is an out-parameter in disguise.
 * - **No import circle** in any package: the graph of its relative imports (and its
 *   `#subpath` imports), type-only imports and re-exports included. A circle makes module
 *   evaluation order matter and keeps the files from being read, tested or moved apart.
 * - **Rooms a reader takes in at a sitting**: no file of a package's `src/` over 300 code
 *   lines (non-blank lines that are not only a comment), no folder holding more than 20
 *   files. Test support (`*.test-support.ts`, `*.contract.ts`) counts as code here; tests
 *   (`*.test.ts`) and `testing/` folders (generated clients) do not.
 * - **No reference to an issue or to a document outside the repository** in any file of a
 *   package's `src/`, tests included: no "issue 24", "#12" or "DESIGN §3". A reader of the
 *   published package has neither, so a comment states the reason itself (an RFC section,
 *   "RFC 9110 §11.1", is a public reference and stays). The published sources point to no
 *   page of the repository's `docs/` either: the tarball ships `src/` and `dist/`, not them.
 *
 * The sources are parsed with the TypeScript compiler, so a `let` inside a block, a string
 * or a comment is not mistaken for a module variable. Test code is what the packages'
 * `files` leave out of the tarball: `*.test.ts`, `*.test-support.ts`, `*.contract.ts`,
 * `*.bench.ts` and `testing/` folders. A failure lists each violation by file and line.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const TEST_CODE = /(\.test\.ts|\.test-support\.ts|\.contract\.ts|\.bench\.ts)$|(^|\/)testing\//;

const packages = readdirSync(join(root, 'packages')).filter((dir) => existsSync(join(root, 'packages', dir, 'src')));

/** Every `.ts` file under `dir`, test code included, as absolute paths. */
function allTsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return allTsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * References to an issue tracker or a design document that is not in the repository: "issue
 * 24", "Issue #7", "#12", "DESIGN §3", "DESIGN.md", or a `§` with no RFC named on its line
 * or the line before ("RFC 3986 §2.1, §2.5" is fine, and so is a citation that wraps).
 * A `#` and digits inside quotes is a colour or an anchor, not an issue.
 */
const OUTSIDE_REFERENCE = [/\bissues? #?\d/i, /(?<![\w&#/'".$])#\d+\b(?![\w-])/, /\bDESIGN\b/];

/** A pointer to a page of the repository's `docs/`, which no published package ships. */
const DOCS_PAGE = /\bdocs\/[\w-]+\.md\b/;

/** `file:line text` for each line of `text` that refers to an issue or an outside document. */
function outsideReferences(file: string, text: string): string[] {
  const lines = text.split('\n');
  return lines.flatMap((line, n) => {
    const section = line.includes('§') && !/\bRFC \d+/.test(`${lines[n - 1] ?? ''} ${line}`);
    return section || OUTSIDE_REFERENCE.some((pattern) => pattern.test(line)) ? [`${relative(root, file)}:${n + 1} ${line.trim()}`] : [];
  });
}

/** Every non-test `.ts` file under `dir`, as absolute paths. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !TEST_CODE.test(relative(root, path))) out.push(path);
  }
  return out;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

/** `file:line name` for each `let`/`var` declared at the top level of `source`. */
function moduleVariables(source: ts.SourceFile): string[] {
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    // `const` (and `using`) bind once; everything else (`let`, `var`) can be reassigned.
    if ((list.flags & (ts.NodeFlags.Const | ts.NodeFlags.Using)) !== 0) continue;
    const kind = (list.flags & ts.NodeFlags.Let) !== 0 ? 'let' : 'var';
    for (const declaration of list.declarations) {
      const { line } = source.getLineAndCharacterOfPosition(declaration.getStart(source));
      found.push(`${relative(root, source.fileName)}:${line + 1} ${kind} ${declaration.name.getText(source)}`);
    }
  }
  return found;
}

/** The module specifiers `source` imports or re-exports: static, type-only, `import()` and `import('…')` types. */
function specifiers(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source file a relative specifier names: as written, `.js` → `.ts`, with `.ts` added, or a folder's `index.ts`. */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((path) => path.endsWith('.ts') && existsSync(path) && statSync(path).isFile());
}

/** Source files a `#name` subpath import resolves to under any condition (`dist/x.js` → `src/x.ts`). */
function subpathTargets(pkgDir: string, specifier: string): string[] {
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { imports?: Record<string, unknown> };
  const targets: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      const source = join(pkgDir, value.replace(/^\.\/dist\//, 'src/').replace(/\.(c|m)?js$/, '.ts'));
      if (existsSync(source)) targets.push(source);
    } else if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) collect(inner);
    }
  };
  collect(manifest.imports?.[specifier]);
  return [...new Set(targets)];
}

/** The package's import graph: each non-test source file → the files it imports. */
function importGraph(pkg: string): Map<string, string[]> {
  const pkgDir = join(root, 'packages', pkg);
  const files = sourceFiles(join(pkgDir, 'src'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const specifier of specifiers(parse(file))) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (target !== undefined) targets.add(target);
      } else if (specifier.startsWith('#')) {
        for (const target of subpathTargets(pkgDir, specifier)) targets.add(target);
      }
    }
    graph.set(file, [...targets].filter((target) => !TEST_CODE.test(relative(root, target))));
  }
  return graph;
}

/**
 * One circle per strongly connected component of more than one file (or a file importing
 * itself), written `a.ts → b.ts → a.ts` with paths relative to the package's `src/`.
 * Tarjan's algorithm; the circle shown is a shortest one through the component's first file.
 */
function circles(graph: ReadonlyMap<string, readonly string[]>, base: string): string[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components.map((component) => {
    const start = component[0] as string;
    const inside = new Set(component);
    // Breadth-first from `start` back to itself, inside the component.
    const previous = new Map<string, string>();
    const queue = [start];
    let end: string | undefined;
    while (queue.length > 0 && end === undefined) {
      const node = queue.shift() as string;
      for (const next of graph.get(node) ?? []) {
        if (!inside.has(next)) continue;
        if (next === start) {
          end = node;
          break;
        }
        if (!previous.has(next)) {
          previous.set(next, node);
          queue.push(next);
        }
      }
    }
    const path = [start];
    for (let node = end as string; node !== start; node = previous.get(node) as string) path.splice(1, 0, node);
    path.push(start);
    return path.map((file) => relative(base, file)).join(' → ');
  });
}

describe('package sources', () => {
  it.each(packages)('%s: no module-level let or var outside test code', (pkg) => {
    const found = sourceFiles(join(root, 'packages', pkg, 'src')).flatMap((file) => moduleVariables(parse(file)));
    expect(found).toEqual([]);
  });

  it.each(packages)('%s: no import circle', (pkg) => {
    expect(circles(importGraph(pkg), join(root, 'packages', pkg, 'src'))).toEqual([]);
  });

  it.each(packages)('%s: no reference to an issue or a document outside the repository', (pkg) => {
    const found = allTsFiles(join(root, 'packages', pkg, 'src')).flatMap((file) => outsideReferences(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it.each(packages)('%s: no published source points to a docs/ page', (pkg) => {
    const found = sourceFiles(join(root, 'packages', pkg, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, n) => (DOCS_PAGE.test(line) ? [`${relative(root, file)}:${n + 1} ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

/** Code lines of a text: non-blank lines that are not only a comment (starting with `//`, `/*` or `*`). */
function codeLineCount(text: string): number {
  return text.split('\n').filter((line) => !/^\s*$|^\s*(\/\/|\/\*|\*)/.test(line)).length;
}

/** What the size rules leave out: tests, and `testing/` folders (generated clients, fixtures). */
const SIZE_EXEMPT = /\.test\.ts$|(^|\/)testing\//;
const MAX_CODE_LINES = 300;
const MAX_FOLDER_FILES = 20;

/** Every `.ts` file of `dir` and its folders that the size rules count, by folder. */
function filesByFolder(dir: string): Map<string, string[]> {
  const byFolder = new Map<string, string[]>();
  for (const file of allTsFiles(dir)) {
    if (file.endsWith('.d.ts') || SIZE_EXEMPT.test(relative(root, file))) continue;
    const folder = dirname(file);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
  }
  return byFolder;
}

describe('package sources: sizes', () => {
  it.each(packages)(`%s: no file over ${MAX_CODE_LINES} code lines`, (pkg) => {
    const files = [...filesByFolder(join(root, 'packages', pkg, 'src')).values()].flat();
    const over = files.flatMap((file) => {
      const lines = codeLineCount(readFileSync(file, 'utf8'));
      return lines > MAX_CODE_LINES ? [`${relative(root, file)}: ${lines}`] : [];
    });
    expect(over).toEqual([]);
  });

  it.each(packages)(`%s: no folder over ${MAX_FOLDER_FILES} files`, (pkg) => {
    const over = [...filesByFolder(join(root, 'packages', pkg, 'src'))].flatMap(([folder, files]) =>
      files.length > MAX_FOLDER_FILES ? [`${relative(root, folder)}: ${files.length}`] : [],
    );
    expect(over).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('count code lines: not blank lines, not comment lines, every other line', () => {
    const text = ['/**', ' * A module.', ' */', "import a from './a.ts';", '', '// why', 'const b = a; // trailing', '  /* inline */ const c = 1;', '   ', '}'].join('\n');
    // `/* inline */ const c` starts as a comment: counted out, as the line-by-line rule reads it.
    expect(codeLineCount(text)).toBe(3);
  });

  const source = (text: string): ts.SourceFile => ts.createSourceFile(join(root, 'x.ts'), text, ts.ScriptTarget.Latest, true);

  it('find top-level let and var, and nothing nested, constant or in text', () => {
    const text = [
      'let a = 1, b;',
      'var c;',
      'const d = new Map();',
      'export let e = 0;',
      'function f() { let g = 1; var h; return g; }',
      'class K { static x = 1; m() { let y; } }',
      "const s = 'let z = 1';",
      '// let w = 2;',
      'for (let i = 0; i < 1; i++) {}',
      '{ let block = 1; }',
    ].join('\n');
    expect(moduleVariables(source(text))).toEqual(['x.ts:1 let a', 'x.ts:1 let b', 'x.ts:2 var c', 'x.ts:4 let e']);
  });

  it('read every kind of import, type-only ones included', () => {
    const text = [
      "import a from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C } from './c.ts';",
      "export { d } from './d.ts';",
      "export type { E } from './e.ts';",
      "export * from './f.ts';",
      "import './g.ts';",
      "const h = await import('./h.ts');",
      "type I = import('./i.ts').I;",
      "import j = require('./j.ts');",
    ].join('\n');
    expect(specifiers(source(text)).sort()).toEqual(['./a.ts', './b.ts', './c.ts', './d.ts', './e.ts', './f.ts', './g.ts', './h.ts', './i.ts', './j.ts']);
  });

  it('find references to issues and outside documents, and not RFC sections, colours or entities', () => {
    const text = [
      '// issue 24, item 8',
      ' * (Issue #7)',
      '// fixed in #12.',
      '// DESIGN §3',
      '// see DESIGN.md',
      '// the rules of §2',
      '// RFC 9110 §11.1 and §11.6.1',
      '// as RFC 9110 says (§11.4), and',
      '// §11.1 on the line after it',
      "const colour = '#333';",
      "const entity = '&#39;';",
      '// a #hashtag and issues in general',
      "const url = 'https://example.com/#1';",
    ].join('\n');
    expect(outsideReferences(join(root, 'x.ts'), text)).toEqual([
      'x.ts:1 // issue 24, item 8',
      'x.ts:2 * (Issue #7)',
      'x.ts:3 // fixed in #12.',
      'x.ts:4 // DESIGN §3',
      'x.ts:5 // see DESIGN.md',
      'x.ts:6 // the rules of §2',
    ]);
    expect(outsideReferences(join(root, 'x.ts'), 'one line\n// §4 after no RFC')).toEqual(['x.ts:2 // §4 after no RFC']);
  });

  it('report a circle once per component, through type-only edges too, and none in a tree', () => {
    const graph = new Map([
      ['/p/a.ts', ['/p/b.ts', '/p/d.ts']],
      ['/p/b.ts', ['/p/c.ts']],
      ['/p/c.ts', ['/p/a.ts']],
      ['/p/d.ts', ['/p/d.ts']],
      ['/p/e.ts', ['/p/a.ts']],
    ]);
    expect(circles(graph, '/p')).toEqual(['d.ts → d.ts', 'a.ts → b.ts → c.ts → a.ts']);
    expect(circles(new Map([['/p/a.ts', ['/p/b.ts', '/p/c.ts']], ['/p/b.ts', ['/p/c.ts']], ['/p/c.ts', []]]), '/p')).toEqual([]);
  });
});
