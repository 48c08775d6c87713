import type { Options } from 'tsup';

/** What every package ships as modules: its sources, tests and test helpers left out. */
const MODULES = [
  'src/**/*.ts',
  '!src/**/*.test.ts',
  '!src/**/*.test-support.ts',
  '!src/**/*.contract.ts',
  '!src/**/*.bench.ts',
  '!src/**/testing/**',
];

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * Every import stays an import: a relative one is pointed at the sibling output file
 * (`./x.ts` → `./x.js` in ESM, `./x.cjs` in CommonJS), anything else (`@keyset/core`,
 * `#crypto`, a peer) is left for the consumer's resolver. esbuild alone keeps `.ts`
 * specifiers when not bundling, so the build "bundles" each module with all its imports
 * external: one output file per source file.
 */
const importsStayImports: EsbuildPlugin = {
  name: 'imports-stay-imports',
  setup(build) {
    const ext = build.initialOptions.outExtension?.['.js'] ?? '.js';
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (args.path.startsWith('.')) return { path: args.path.replace(/\.ts$/, ext), external: true };
      return { path: args.path, external: true };
    });
  },
};

/**
 * One build recipe for every published package: ESM and CommonJS, one output file per
 * source module (so a bundler drops every module an app does not reach, with
 * `sideEffects: false`), types rolled up per public entry, Node 20 target.
 * Decision and figures: docs/packaging.md.
 */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: MODULES,
    format: ['esm', 'cjs'],
    dts: { entry: 'src/index.ts', compilerOptions: { ignoreDeprecations: '6.0', composite: false } },
    target: 'node20',
    platform: 'neutral',
    esbuildPlugins: [importsStayImports],
    // Maps ship, without the sources inlined: they point at the package's own `src/`,
    // which ships too (tests excluded). Stack traces and debuggers reach the TypeScript
    // at a third of the tarball size. Decision and figures: docs/packaging.md.
    sourcemap: true,
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
    clean: true,
    splitting: false,
    // Nothing to shake inside one module's file; a consumer's bundler drops whole modules.
    treeshake: false,
    ...overrides,
  };
}
