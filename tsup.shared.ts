import type { Options } from 'tsup';

/** One build recipe for every published package: ESM + CJS + d.ts, Node 20 target. */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { ignoreDeprecations: '6.0', composite: false } },
    target: 'node20',
    platform: 'neutral',
    // Maps ship, without the sources inlined: they point at the package's own `src/`,
    // which ships too (tests excluded). Stack traces and debuggers reach the TypeScript
    // at a third of the tarball size. Decision and figures: docs/packaging.md.
    sourcemap: true,
    esbuildOptions(options) {
      options.sourcesContent = false;
    },
    clean: true,
    splitting: false,
    treeshake: true,
    ...overrides,
  };
}
