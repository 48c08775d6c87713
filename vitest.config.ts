import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { DURATIONS_FILE } from './test/support/file-order.ts';
import SlowestFirstSequencer from './test/support/slowest-first-sequencer.ts';
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
      { find: /^@keyset\/opentelemetry$/, replacement: src('opentelemetry') },
      { find: /^@keyset\/prisma$/, replacement: src('prisma') },
      { find: /^@keyset\/graphql$/, replacement: src('graphql') },
      // graphql 16 ships CommonJS (`main`) and ESM (`module`) copies; Node's `import` takes
      // the CommonJS one, as graphql-yoga and Apollo Server (run by Node) do. Vite would pick
      // the ESM one for the sources under test: two GraphQLError classes, and a server that
      // masks keyset's errors as not its own. One copy, Node's, as users run it.
      { find: /^graphql$/, replacement: createRequire(new URL('./packages/graphql/package.json', import.meta.url)).resolve('graphql') },
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
    // One queue of files for three workers, started in the order slowest-first-sequencer.ts
    // gives (the slowest end-to-end files first, the packages' files after them, so these
    // fill the workers while the longest end-to-end files finish):
    // - end to end (the example, the docs, packing and installing): servers, child
    //   processes, Next.js builds. Each file in a fresh process (`isolate`), as each starts
    //   what it tests; they wait on children, sockets and timers as much as they compute, so
    //   three run at once on two cores.
    // - the packages' own tests: mostly CPU (property tests, PGlite), and not isolated: a
    //   worker runs file after file in one process, importing the sources once instead of
    //   once per file (2026-11-28, 15 files of packages/core/src/pagination at a load average
    //   of 45: 6.9 s instead of 20.5 s, `npx vitest run <files> --maxWorkers=1 [--no-isolate]`).
    //   They keep no state in modules and restore what they change (fake timers, spies,
    //   process listeners), so a file finds the process as a fresh one would be.
    // The projects share one `sequence.groupOrder`: vitest runs groups one after the other,
    // so two groups made the packages wait for the last end-to-end file, with one worker
    // busy and two idle (vitest requires one `maxWorkers` within a group).
    maxWorkers: 3,
    sequence: { sequencer: SlowestFirstSequencer },
    projects: [
      // Each project names its own files: an `include` here would be added to each project's.
      {
        extends: true,
        test: { name: 'end-to-end', include: ['examples/*/test/**/*.test.ts', 'test/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'packages', include: ['packages/*/src/**/*.test.ts'], isolate: false },
      },
      // @keyset/kysely supports kysely 0.28 (the last line that runs on Node 20; 0.29 needs
      // Node 22) and 0.29: its tests run a second time with `kysely` resolved to 0.28,
      // the package's `kysely-028` devDependency, sources under test included.
      {
        extends: true,
        resolve: { alias: [{ find: /^kysely$/, replacement: 'kysely-028' }] },
        test: {
          name: 'kysely-0.28',
          include: ['packages/kysely/src/**/*.test.ts'],
          env: { KYSELY_LINE: '0.28' },
          isolate: false,
        },
      },
    ],
    // Every run ends with its ten slowest files, so a file that turns slow shows at once.
    // RECORD_TEST_DURATIONS=1 also writes every file's time where the sequencer reads it.
    // Under CI, also write a JSON report: .ci/run prints a plain "N passed, N failed" line from it.
    reporters: ['default', new SlowestFilesReporter(process.stdout, process.env.RECORD_TEST_DURATIONS === '1' ? DURATIONS_FILE : undefined), ...(process.env.CI === 'true' ? ['json'] : [])],
    ...(process.env.CI === 'true' ? { outputFile: { json: '.vitest-report.json' } } : {}),
  },
});
