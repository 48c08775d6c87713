/**
 * The table every run ends with: the ten files that held a worker longest, slowest first,
 * each file's whole time (environment, imports, hooks and tests), in seconds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import SlowestFilesReporter, { formatSlowestFiles, slowestFiles } from './slowest-files-reporter.ts';

/** The parts of a `TestModule` the reporter reads. */
function module(file: string, parts: { setup?: number; imports?: number; tests: number }, project = 'packages'): TestModule {
  const { setup = 0, imports = 0, tests } = parts;
  return {
    relativeModuleId: file,
    project: { name: project },
    diagnostic: () => ({ environmentSetupDuration: setup, prepareDuration: 0, collectDuration: imports, setupDuration: 0, duration: tests, heap: undefined, importDurations: {} }),
  } as unknown as TestModule;
}

describe('slowest files', () => {
  it('counts a file’s imports and setup, not only its tests', () => {
    const rows = slowestFiles([module('a.test.ts', { tests: 1_000 }), module('b.test.ts', { setup: 300, imports: 900, tests: 200 })]);
    expect(rows.map((r) => [r.file, r.ms])).toEqual([
      ['b.test.ts', 1_400],
      ['a.test.ts', 1_000],
    ]);
  });

  it('keeps the ten slowest of any run, slowest first', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 600_000 }), { maxLength: 40 }), (times) => {
        const rows = slowestFiles(times.map((ms, i) => module(`f${i}.test.ts`, { tests: ms })));
        const expected = [...times].sort((a, b) => b - a).slice(0, 10);
        expect(rows.map((r) => r.ms)).toEqual(expected);
      }),
    );
  });

  it('prints seconds with one decimal, the file and its project', () => {
    const text = formatSlowestFiles(slowestFiles([module('examples/x.test.ts', { tests: 61_234 }, 'end-to-end'), module('packages/y.test.ts', { tests: 950 })]));
    expect(text).toBe(['Slowest test files:', '   61.2 s  examples/x.test.ts [end-to-end]', '    0.9 s  packages/y.test.ts [packages]'].join('\n'));
  });

  it('prints the table after the run, and nothing when no file ran', () => {
    const written: string[] = [];
    const reporter = new SlowestFilesReporter({ write: (text) => written.push(text) });
    reporter.onTestRunEnd([]);
    expect(written).toEqual([]);
    reporter.onTestRunEnd([module('a.test.ts', { tests: 2_000 })]);
    expect(written.join('')).toBe('\nSlowest test files:\n    2.0 s  a.test.ts [packages]\n');
  });
});
