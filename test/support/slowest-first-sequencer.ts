/**
 * vitest's sequencer (`sequence.sequencer`), ordering files as file-order.ts says: the
 * slowest first, by the times a whole run recorded.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { durationKey, readDurations, slowestFirst } from './file-order.ts';

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const placed = files.map((spec) => ({
      spec,
      project: spec.project.name,
      key: durationKey(spec.project.name, relative(spec.project.config.root, spec.moduleId)),
    }));
    return slowestFirst(placed, durations).map(({ spec }) => spec);
  }
}
