import { describe, expect, it } from 'vitest';
import { LruCache } from './lru-cache.ts';

describe('LruCache', () => {
  it('evicts the least recently used entry beyond max', () => {
    const cache = new LruCache<number>(2);
    cache.set('a', 1, Infinity);
    cache.set('b', 2, Infinity);
    expect(cache.get('a', 0)).toBe(1); // a is now the most recent
    cache.set('c', 3, Infinity);
    expect(cache.get('b', 0)).toBeUndefined();
    expect(cache.get('a', 0)).toBe(1);
    expect(cache.get('c', 0)).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('keeps a key that is used between inserts, however many inserts pass', () => {
    const cache = new LruCache<number>(100);
    cache.set('hot', 1, Infinity);
    for (let i = 0; i < 10_000; i++) {
      cache.set(`cold${i}`, i, Infinity);
      expect(cache.get('hot', 0)).toBe(1);
    }
    // An entry not used for `max` inserts is gone.
    for (let i = 0; i < 100; i++) cache.set(`new${i}`, i, Infinity);
    expect(cache.get('hot', 0)).toBeUndefined();
  });

  it('drops an entry at its deadline', () => {
    const cache = new LruCache<number>(10);
    cache.set('a', 1, 100);
    expect(cache.get('a', 99)).toBe(1);
    expect(cache.get('a', 100)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('stays bounded under a flood of distinct keys', () => {
    const cache = new LruCache<number>(1000);
    for (let i = 0; i < 100_000; i++) cache.set(`k${i}`, i, Infinity);
    expect(cache.size).toBe(1000);
    expect(cache.get('k99999', 0)).toBe(99_999);
    expect(cache.get('k0', 0)).toBeUndefined();
  });

  it('deletes by predicate and holds nothing with max 0', () => {
    const cache = new LruCache<{ id: string }>(10);
    cache.set('a', { id: 'x' }, Infinity);
    cache.set('b', { id: 'y' }, Infinity);
    cache.set('c', { id: 'x' }, Infinity);
    expect(cache.deleteWhere((v) => v.id === 'x')).toBe(2);
    expect(cache.get('b', 0)).toEqual({ id: 'y' });
    const none = new LruCache<number>(0);
    none.set('a', 1, Infinity);
    expect(none.size).toBe(0);
  });
});
