import { describe, expect, it } from 'vitest';
import { LruCache } from './lru-cache.ts';

type Box = { n: number; until: number; hit: number };
/** A fresh entry per set: the cache keeps its bookkeeping on the value. */
const box = (n: number): Box => ({ n, until: 0, hit: 0 });
const unbox = (entry: Box | undefined): number | undefined => entry?.n;

describe('LruCache', () => {
  it('evicts the least recently used entry beyond max', () => {
    const cache = new LruCache<Box>(2);
    cache.set('a', box(1), Infinity);
    cache.set('b', box(2), Infinity);
    expect(unbox(cache.get('a', 0))).toBe(1); // a is now the most recent
    cache.set('c', box(3), Infinity);
    expect(unbox(cache.get('b', 0))).toBeUndefined();
    expect(unbox(cache.get('a', 0))).toBe(1);
    expect(unbox(cache.get('c', 0))).toBe(3);
    expect(cache.size).toBe(2);
  });

  it('keeps a key that is used between inserts, however many inserts pass', () => {
    const cache = new LruCache<Box>(100);
    cache.set('hot', box(1), Infinity);
    for (let i = 0; i < 10_000; i++) {
      cache.set(`cold${i}`, box(i), Infinity);
      expect(unbox(cache.get('hot', 0))).toBe(1);
    }
    // An entry not used while `2 · max` new keys are inserted is gone (second chance:
    // its last hit buys it one more trip through the queue, no more).
    for (let i = 0; i < 200; i++) cache.set(`new${i}`, box(i), Infinity);
    expect(unbox(cache.get('hot', 0))).toBeUndefined();
  });

  it('moves nothing on a hit: a full cache whose every entry is hit keeps them all', () => {
    const cache = new LruCache<Box>(1000);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, box(i), Infinity);
    for (let round = 0; round < 3; round++) for (let i = 0; i < 1000; i++) expect(unbox(cache.get(`k${(i * 7) % 1000}`, 0))).toBe((i * 7) % 1000);
    expect(cache.size).toBe(1000);
  });

  it('evicts an entry not hit before one that was, and the oldest when all were', () => {
    const cache = new LruCache<Box>(3);
    cache.set('a', box(1), Infinity);
    cache.set('b', box(2), Infinity);
    cache.set('c', box(3), Infinity);
    cache.get('a', 0);
    cache.get('c', 0);
    cache.set('d', box(4), Infinity); // b is the only one not hit
    expect(unbox(cache.get('b', 0))).toBeUndefined();
    // The queue is now c (still marked), a (queued again, unmarked), d; mark all three:
    cache.get('a', 0);
    cache.get('c', 0);
    cache.get('d', 0);
    cache.set('e', box(5), Infinity); // every entry was hit: the oldest-queued (c) goes
    expect(['a', 'c', 'd', 'e'].filter((k) => unbox(cache.get(k, 0)) !== undefined)).toEqual(['a', 'd', 'e']);
  });

  it('drops an entry at its deadline', () => {
    const cache = new LruCache<Box>(10);
    cache.set('a', box(1), 100);
    expect(unbox(cache.get('a', 99))).toBe(1);
    expect(unbox(cache.get('a', 100))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('stays bounded under a flood of distinct keys', () => {
    const cache = new LruCache<Box>(1000);
    for (let i = 0; i < 100_000; i++) cache.set(`k${i}`, box(i), Infinity);
    expect(cache.size).toBe(1000);
    expect(unbox(cache.get('k99999', 0))).toBe(99_999);
    expect(unbox(cache.get('k0', 0))).toBeUndefined();
  });

  it('deletes by predicate and holds nothing with max 0', () => {
    const cache = new LruCache<{ id: string; until: number; hit: number }>(10);
    cache.set('a', { id: 'x', until: 0, hit: 0 }, Infinity);
    cache.set('b', { id: 'y', until: 0, hit: 0 }, Infinity);
    cache.set('c', { id: 'x', until: 0, hit: 0 }, Infinity);
    expect(cache.deleteWhere((v) => v.id === 'x')).toBe(2);
    expect(cache.get('b', 0)?.id).toBe('y');
    const none = new LruCache<Box>(0);
    none.set('a', box(1), Infinity);
    expect(none.size).toBe(0);
  });
});
