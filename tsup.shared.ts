import type { Options } from 'tsup';

/** One build recipe for every published package: ESM + CJS + d.ts, Node 20 target. */
export function packageBuild(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { ignoreDeprecations: '6.0', composite: false } },
    target: 'node20',
    platform: 'neutral',
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    ...overrides,
  };
}
