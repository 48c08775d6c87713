/**
 * The vitest configuration StrykerJS runs (`pnpm mutate`): the repository's aliases, and
 * only the core test files of the security modules it mutates (keys, pagination, rate
 * limits, quotas), so a mutation run never starts the example's servers or the adapters'
 * suites. Stryker narrows further to the tests related to each mutated file.
 *
 * `MUTATE_TESTS` (comma-separated globs) replaces that list, for a run over one module on
 * a busy machine: every test that imports a module is "related" to it, and the key
 * format is imported by nearly every key test. See docs/security.md, "Mutation testing".
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

export default defineConfig({
  ...(base.resolve === undefined ? {} : { resolve: base.resolve }),
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    include: process.env.MUTATE_TESTS?.split(',') ?? [
      'packages/core/src/keys/**/*.test.ts',
      'packages/core/src/auth/**/*.test.ts',
      'packages/core/src/admin/**/*.test.ts',
      'packages/core/src/redaction/**/*.test.ts',
      'packages/core/src/pagination/**/*.test.ts',
      'packages/core/src/cursor/**/*.test.ts',
      'packages/core/src/rate-limit/**/*.test.ts',
      'packages/core/src/quota/**/*.test.ts',
    ],
  },
});
