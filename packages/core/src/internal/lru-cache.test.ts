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
    // An entry not used while `2 · max` new keys are inserted is gone (second chance:
    // its last hit buys it one more trip through the queue, no more).
    for (let i = 0; i < 200; i++) cache.set(`new${i}`, i, Infinity);
    expect(cache.get('hot', 0)).toBeUndefined();
  });

  it('moves nothing on a hit: a full cache whose every entry is hit keeps them all', () => {
    const cache = new LruCache<number>(1000);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i, Infinity);
    for (let round = 0; round < 3; round++) for (let i = 0; i < 1000; i++) expect(cache.get(`k${(i * 7) % 1000}`, 0)).toBe((i * 7) % 1000);
    expect(cache.size).toBe(1000);
  });

  it('evicts an entry not hit before one that was, and the oldest when all were', () => {
    const cache = new LruCache<number>(3);
    cache.set('a', 1, Infinity);
    cache.set('b', 2, Infinity);
    cache.set('c', 3, Infinity);
    cache.get('a', 0);
    cache.get('c', 0);
    cache.set('d', 4, Infinity); // b is the only one not hit
    expect(cache.get('b', 0)).toBeUndefined();
    // The queue is now c (still marked), a (queued again, unmarked), d; mark all three:
    cache.get('a', 0);
    cache.get('c', 0);
    cache.get('d', 0);
    cache.set('e', 5, Infinity); // every entry was hit: the oldest-queued (c) goes
    expect(['a', 'c', 'd', 'e'].filter((k) => cache.get(k, 0) !== undefined)).toEqual(['a', 'd', 'e']);
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
