/**
 * The order a run starts its files in: projects in their set order, then new files, then
 * the recorded ones slowest first; and the times the reporter records for it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import { durationKey, PROJECT_ORDER, slowestFirst } from './file-order.ts';
import { recordedDurations } from './slowest-files-reporter.ts';

const file = (project: string, path: string): { key: string; project: string } => ({ key: durationKey(project, path), project });

describe('slowest first', () => {
  it('starts the slowest recorded file first, and a file with no recorded time before them', () => {
    const files = [file('end-to-end', 'a.test.ts'), file('end-to-end', 'b.test.ts'), file('end-to-end', 'new.test.ts'), file('end-to-end', 'c.test.ts')];
    const durations = { 'end-to-end:a.test.ts': 3, 'end-to-end:b.test.ts': 80, 'end-to-end:c.test.ts': 12 };
    expect(slowestFirst(files, durations).map((f) => f.key)).toEqual(['end-to-end:new.test.ts', 'end-to-end:b.test.ts', 'end-to-end:c.test.ts', 'end-to-end:a.test.ts']);
  });

  it('keeps each project together, in the set order, whatever the times', () => {
    const files = [file('packages', 'slow.test.ts'), file('kysely-0.28', 'k.test.ts'), file('end-to-end', 'quick.test.ts')];
    const durations = { 'packages:slow.test.ts': 500, 'kysely-0.28:k.test.ts': 900, 'end-to-end:quick.test.ts': 0.1 };
    expect(slowestFirst(files, durations).map((f) => f.project)).toEqual(['end-to-end', 'packages', 'kysely-0.28']);
  });

  it('gives an order that is a permutation, grouped by project and slowest first within each, for any files and times', () => {
    const arbitraryFile = fc.record({ project: fc.constantFrom(...PROJECT_ORDER, 'other'), path: fc.stringMatching(/^[a-z]{1,6}\.test\.ts$/) });
    fc.assert(
      fc.property(fc.uniqueArray(arbitraryFile, { selector: (f) => `${f.project}:${f.path}`, maxLength: 30 }), fc.array(fc.option(fc.float({ min: 0, max: 600, noNaN: true }), { nil: undefined }), { minLength: 30, maxLength: 30 }), (raw, times) => {
        const files = raw.map((f) => file(f.project, f.path));
        const durations: Record<string, number> = {};
        files.forEach((f, i) => {
          if (times[i] !== undefined) durations[f.key] = times[i];
        });
        const ordered = slowestFirst(files, durations);
        expect([...ordered].sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual([...files].sort((a, b) => (a.key < b.key ? -1 : 1)));
        const rank = (p: string): number => (PROJECT_ORDER.includes(p) ? PROJECT_ORDER.indexOf(p) : PROJECT_ORDER.length);
        const time = (key: string): number => durations[key] ?? Number.POSITIVE_INFINITY;
        for (let i = 1; i < ordered.length; i++) {
          const [a, b] = [ordered[i - 1]!, ordered[i]!];
          expect(rank(a.project)).toBeLessThanOrEqual(rank(b.project));
          if (a.project === b.project) expect(time(a.key)).toBeGreaterThanOrEqual(time(b.key));
        }
      }),
    );
  });
});

describe('recorded times', () => {
  /** The parts of a `TestModule` the reporter reads. */
  const module = (path: string, ms: number, project: string): TestModule =>
    ({
      relativeModuleId: path,
      project: { name: project },
      diagnostic: () => ({ environmentSetupDuration: 0, prepareDuration: 0, collectDuration: 0, setupDuration: 0, duration: ms, heap: undefined, importDurations: {} }),
    }) as unknown as TestModule;

  it('sets each file of the run to its seconds, keeps the files the run did not touch, and sorts the keys', () => {
    const previous = { 'packages:z.test.ts': 4, 'end-to-end:a.test.ts': 70 };
    const recorded = recordedDurations([module('a.test.ts', 61_234, 'end-to-end'), module('m.test.ts', 940, 'packages')], previous);
    expect(Object.entries(recorded)).toEqual([
      ['end-to-end:a.test.ts', 61.2],
      ['packages:m.test.ts', 0.9],
      ['packages:z.test.ts', 4],
    ]);
  });
});
