import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowestFilesReporter from './test/support/slowest-files-reporter.ts';

const src = (pkg: string, entry = 'index.ts'): string =>
  fileURLToPath(new URL(`./packages/${pkg}/src/${entry}`, import.meta.url));

// Tests run against the TypeScript sources, not dist/, so `pnpm test` needs no build.
// `#crypto` resolves to the node:crypto provider, as it does for users on Node.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@keyset\/core$/, replacement: src('core') },
      { find: /^@keyset\/core\/adapter$/, replacement: src('core', 'adapter.ts') },
      { find: /^#crypto$/, replacement: src('core', 'crypto/crypto.node.ts') },
      { find: /^@keyset\/express$/, replacement: src('express') },
      { find: /^@keyset\/hono$/, replacement: src('hono') },
      { find: /^@keyset\/fetch$/, replacement: src('fetch') },
      { find: /^@keyset\/fastify$/, replacement: src('fastify') },
      { find: /^@keyset\/postgres$/, replacement: src('postgres') },
      { find: /^@keyset\/redis$/, replacement: src('redis') },
      { find: /^@keyset\/client$/, replacement: src('client') },
      { find: /^@keyset\/openapi$/, replacement: src('openapi') },
      { find: /^@keyset\/kysely$/, replacement: src('kysely') },
      { find: /^@keyset\/drizzle$/, replacement: src('drizzle') },
      { find: /^@keyset\/conformance$/, replacement: src('conformance') },
      { find: /^@keyset\/conformance\/fixture$/, replacement: src('conformance', 'fixture.ts') },
      { find: /^@keyset\/test-support$/, replacement: fileURLToPath(new URL('./test/support/index.ts', import.meta.url)) },
    ],
  },
  test: {
    // CPU-bound property tests take several times longer with both cores busy (2026-11-26:
    // memory-store.prop.test.ts's 1,500-run model test took 23 s at a load average of 16);
    // a timeout is not an assertion, so it is set for a loaded machine, not a calm one.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // Each project names its own files: an `include` here would be added to each project's.
      { extends: true, test: { name: 'keyset', include: ['packages/*/src/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'test/**/*.test.ts'] } },
      // @keyset/kysely supports kysely 0.28 (the last line that runs on Node 20; 0.29 needs
      // Node 22) and 0.29: its tests run a second time with `kysely` resolved to 0.28,
      // the package's `kysely-028` devDependency, sources under test included.
      {
        extends: true,
        resolve: { alias: [{ find: /^kysely$/, replacement: 'kysely-028' }] },
        test: { name: 'kysely-0.28', include: ['packages/kysely/src/**/*.test.ts'], env: { KYSELY_LINE: '0.28' } },
      },
    ],
    // Every run ends with its ten slowest files, so a file that turns slow shows at once.
    // Under CI, also write a JSON report: .ci/run prints a plain "N passed, N failed" line from it.
    reporters: ['default', new SlowestFilesReporter(), ...(process.env.CI === 'true' ? ['json'] : [])],
    ...(process.env.CI === 'true' ? { outputFile: { json: '.vitest-report.json' } } : {}),
  },
});
