import { describeUsageStore } from '@keyset/test-support';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createMemoryUsageStore } from './memory-usage-store.ts';

let n = 0;
const freshId = (): string => `id_${n++}`;
const store = createMemoryUsageStore();

describeUsageStore('memory', () => ({ store, freshId }), { runs: 15 });

describe('createMemoryUsageStore', () => {
  it('checks its retention', () => {
    expect(() => createMemoryUsageStore({ retention: { minute: 0 } })).toThrow(ConfigError);
    expect(() => createMemoryUsageStore({ retention: { hour: Number.NaN } })).toThrow(ConfigError);
    expect(createMemoryUsageStore({ retention: { minute: 1, hour: 2, day: 3 } }).size).toBe(0);
  });

  it('keeps one row per key and bucket of each size', async () => {
    const own = createMemoryUsageStore();
    await own.add([{ keyId: 'k', ownerId: null, minute: 0, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 }]);
    await own.add([{ keyId: 'k', ownerId: null, minute: 60_000, requests: [1, 0, 0, 0, 0, 0, 0, 0, 0], credits: 0 }]);
    // Two minutes, one hour, one day.
    expect(own.size).toBe(4);
    expect(await own.prune(10 * 86_400_000)).toBe(2);
    expect(own.size).toBe(2);
  });
});
