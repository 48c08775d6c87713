import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruCache } from './lru-cache.ts';

type Box = { n: number; until: number; hit: number };
/** A fresh entry per set: the cache keeps its bookkeeping on the value. */
const box = (n: number): Box => ({ n, until: 0, hit: 0 });
const unbox = (entry: Box | undefined): number | undefined => entry?.n;

/** The eviction rule written as plainly as possible: an array in queue order. */
class ModelCache {
  readonly queue: { key: string; value: number; until: number; hit: boolean }[] = [];
  constructor(readonly max: number) {}
  get(key: string, now: number): number | undefined {
    const at = this.queue.findIndex((e) => e.key === key);
    if (at < 0) return undefined;
    const entry = this.queue[at]!;
    if (now >= entry.until) {
      this.queue.splice(at, 1);
      return undefined;
    }
    entry.hit = true;
    return entry.value;
  }
  set(key: string, value: number, until: number): void {
    if (this.max <= 0) return;
    const at = this.queue.findIndex((e) => e.key === key);
    if (at >= 0) this.queue.splice(at, 1);
    else if (this.queue.length >= this.max) {
      // Second chance: hit entries go to the back unmarked, the first unmarked one goes.
      for (;;) {
        const first = this.queue.shift()!;
        if (!first.hit) break;
        first.hit = false;
        this.queue.push(first);
      }
    }
    this.queue.push({ key, value, until, hit: false });
  }
  delete(key: string): void {
    const at = this.queue.findIndex((e) => e.key === key);
    if (at >= 0) this.queue.splice(at, 1);
  }
}

const op = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 11 }), value: fc.integer(), ttl: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 11 }) }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 11 }) }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 10 }) }),
);

describe('LruCache (second chance), properties', () => {
  it('answers every get as the plain model does, and never holds more than max', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
        const cache = new LruCache<Box>(max);
        const model = new ModelCache(max);
        let now = 0;
        for (const o of ops) {
          if (o.kind === 'tick') now += o.ms;
          else if (o.kind === 'set') {
            cache.set(`k${o.key}`, box(o.value), now + o.ttl);
            model.set(`k${o.key}`, o.value, now + o.ttl);
            // The entry just set is always there (when the cache holds anything).
            expect(unbox(cache.get(`k${o.key}`, now))).toBe(max > 0 ? o.value : undefined);
            model.get(`k${o.key}`, now);
          } else if (o.kind === 'get') expect(unbox(cache.get(`k${o.key}`, now))).toBe(model.get(`k${o.key}`, now));
          else {
            cache.delete(`k${o.key}`);
            model.delete(`k${o.key}`);
          }
          expect(cache.size).toBe(model.queue.length);
          expect(cache.size).toBeLessThanOrEqual(Math.max(0, max));
        }
      }),
    );
  });

  it('drops an entry not hit while 2 · max new keys are inserted, whatever came before', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 100 }), (max, before) => {
        const cache = new LruCache<Box>(max);
        for (const k of before) if (unbox(cache.get(`k${k}`, 0)) === undefined) cache.set(`k${k}`, box(k), Infinity);
        cache.set('watched', box(-1), Infinity);
        cache.get('watched', 0);
        for (let i = 0; i < 2 * max; i++) cache.set(`new${i}`, box(i), Infinity);
        expect(unbox(cache.get('watched', 0))).toBeUndefined();
      }),
    );
  });

  it('never evicts an entry hit since it was queued while one that was not remains', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), (max, hits) => {
        const cache = new LruCache<Box>(max);
        for (let i = 0; i < max; i++) cache.set(`k${i}`, box(i), Infinity);
        const hitKeys = new Set<string>();
        for (let i = 0; i < max; i++) if (hits[i] === true) {
          cache.get(`k${i}`, 0);
          hitKeys.add(`k${i}`);
        }
        // As many inserts as there are entries not hit: exactly those go.
        const notHit = max - hitKeys.size;
        for (let i = 0; i < notHit; i++) cache.set(`new${i}`, box(i), Infinity);
        for (const key of hitKeys) expect(unbox(cache.get(key, 0))).not.toBeUndefined();
      }),
    );
  });
});
