import { describeQuotaStore } from '@keyset/test-support';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createMemoryQuotaStore } from './memory-quota-store.ts';

let n = 0;
describeQuotaStore('memory', () => ({ stores: [createMemoryQuotaStore()], freshKey: () => `key_${n++}` }));

describe('createMemoryQuotaStore', () => {
  it('refuses malformed spends with ConfigError before touching state', () => {
    const store = createMemoryQuotaStore();
    const ok = { key: 'k', generation: 1, initial: 5, period: 0, refillAmount: null, cost: 1 };
    for (const bad of [
      { ...ok, key: '' },
      { ...ok, cost: -1 },
      { ...ok, cost: 1.5 },
      { ...ok, cost: 1_000_001 },
      { ...ok, initial: -1 },
      { ...ok, refillAmount: 0 },
      { ...ok, period: Number.NaN },
    ]) {
      expect(() => store.spend(bad)).toThrow(ConfigError);
    }
    expect(store.size).toBe(0);
  });

  it('keeps one entry per key, whatever the number of spends', () => {
    const store = createMemoryQuotaStore();
    for (let i = 0; i < 100; i++) store.spend({ key: `k${i % 3}`, generation: 1, initial: 5, period: 0, refillAmount: null, cost: 1 });
    expect(store.size).toBe(3);
  });
});
