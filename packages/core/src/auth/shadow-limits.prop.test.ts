/**
 * Shadow limits, at the core, over memory stores: for any limits of a key and its owner
 * and any traffic, observed limits never refuse, and would refuse exactly the requests the
 * same limits enforced refuse, for the same reason (`shadow-limits.test-support.ts`).
 * Failures print a seed and path: replay with fc.assert(..., { seed, path }).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { checkShadowEquivalence, limitsArb, stepsArb } from './shadow-limits.test-support.ts';

describe('shadow limits', () => {
  it('observed, never refuse; their would-be refusals are exactly, and for the same reason, the refusals of the same limits enforced', async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb(), stepsArb(), (limits, steps) => checkShadowEquivalence(limits, steps, () => ({}))),
      { numRuns: 150 },
    );
  });
});
