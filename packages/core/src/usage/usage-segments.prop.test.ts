import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { USAGE_INTERVAL_MS, usageSegments, usageTopSegments } from './usage-range.ts';

const MINUTE = 60_000;

describe('usageSegments', () => {
  it('covers [from, to) exactly once, in order, each segment aligned to its bucket size, no whole hour read as minutes nor whole day as hours', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40_000_000 }), fc.integer({ min: 0, max: 3 * 1440 }), (startMinute, minutes) => {
        const from = startMinute * MINUTE;
        const to = from + minutes * MINUTE;
        const segments = usageSegments(from, to);
        let at = from;
        for (const segment of segments) {
          expect(segment.from).toBe(at);
          expect(segment.to).toBeGreaterThan(segment.from);
          const size = USAGE_INTERVAL_MS[segment.interval];
          expect(segment.from % size).toBe(0);
          expect(segment.to % size).toBe(0);
          // A finer segment never holds a whole bucket of the next size up.
          const coarser = segment.interval === 'minute' ? USAGE_INTERVAL_MS.hour : segment.interval === 'hour' ? USAGE_INTERVAL_MS.day : undefined;
          if (coarser !== undefined) expect(Math.floor(segment.to / coarser) * coarser - Math.ceil(segment.from / coarser) * coarser).toBeLessThanOrEqual(0);
          at = segment.to;
        }
        expect(at).toBe(to);
        // The fewest rows per key: under 60 minutes at each end, under 24 hours at each end.
        const rows = segments.reduce((n, s) => n + (s.to - s.from) / USAGE_INTERVAL_MS[s.interval], 0);
        expect(rows).toBeLessThanOrEqual(2 * 59 + 2 * 23 + Math.ceil(minutes / 1440) + 1);
      }),
    );
  });

  it('a top over a day at minute interval reads day or hour rows, not 1,440 minutes', () => {
    const day = 20_000 * USAGE_INTERVAL_MS.day;
    expect(usageTopSegments(day, day + USAGE_INTERVAL_MS.day, 'minute')).toEqual([{ interval: 'day', from: day, to: day + USAGE_INTERVAL_MS.day }]);
    // From 10:30:20 to 10:30:10 the next day: the last bucket, 10:30, is read whole.
    const from = day + 10.5 * USAGE_INTERVAL_MS.hour + 20_000;
    expect(usageTopSegments(from, from + USAGE_INTERVAL_MS.day - 10_000, 'minute')).toEqual([
      { interval: 'minute', from: day + 10.5 * USAGE_INTERVAL_MS.hour, to: day + 11 * USAGE_INTERVAL_MS.hour },
      { interval: 'hour', from: day + 11 * USAGE_INTERVAL_MS.hour, to: day + 34 * USAGE_INTERVAL_MS.hour },
      { interval: 'minute', from: day + 34 * USAGE_INTERVAL_MS.hour, to: day + 34.5 * USAGE_INTERVAL_MS.hour + MINUTE },
    ]);
  });
});
