import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DigestCache, type DigestSlot } from './key-verifier.ts';

type Box = DigestSlot & { n: number };
const box = (n: number): Box => ({ n, digestKey: '', until: 0, hit: 0 });

/**
 * 32-character binary digests, from a small pool so that keys repeat, some pairs sharing
 * their first 30 bits (the integer the cache looks them up by) and differing later.
 */
const HEADS = ['\u0000\u0000\u0000\u0000', '\u0000\u0000\u0000\u0003', '\u00ff\u0010\u0020\u0030', 'abcd'];
const digestOf = (head: number, tail: number): string => `${HEADS[head]}${String.fromCharCode(tail, 255 - tail)}${'\u0007'.repeat(26)}`;
const digest = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })).map(([h, t]) => digestOf(h, t));

/** What the cache must answer when it never fills: the value last stored under that very digest. */
class Model {
  readonly held = new Map<string, { n: number; until: number }>();
  get(d: string, now: number): number | undefined {
    const entry = this.held.get(d);
    if (entry === undefined) return undefined;
    if (now >= entry.until) {
      this.held.delete(d);
      return undefined;
    }
    return entry.n;
  }
  set(d: string, n: number, until: number): void {
    this.held.set(d, { n, until });
  }
  delete(d: string): void {
    this.held.delete(d);
  }
}

const op = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), d: digest, n: fc.integer(), ttl: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('get' as const), d: digest }),
  fc.record({ kind: fc.constant('delete' as const), d: digest }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 10 }) }),
);

describe('DigestCache, properties', () => {
  it('answers a digest with the value last stored under it, digests sharing their first 30 bits too, whatever the salt', () => {
    fc.assert(
      fc.property(fc.integer(), fc.array(op, { maxLength: 200 }), (salt, ops) => {
        const cache = new DigestCache<Box>(100, salt);
        const model = new Model();
        let now = 0;
        for (const o of ops) {
          if (o.kind === 'tick') now += o.ms;
          else if (o.kind === 'set') {
            cache.set(o.d, box(o.n), now + o.ttl, now);
            model.set(o.d, o.n, now + o.ttl);
            expect(cache.get(o.d, now)?.n).toBe(o.n);
          } else if (o.kind === 'get') {
            const got = cache.get(o.d, now);
            expect(got?.n).toBe(model.get(o.d, now));
            if (got !== undefined) expect(got.digestKey).toBe(o.d);
          } else {
            cache.delete(o.d);
            model.delete(o.d);
          }
          // One entry per digest at most: never a stale copy beside the current one (16 in the pool).
          expect(cache.size).toBeLessThanOrEqual(16);
        }
        for (const d of [...model.held.keys()]) expect(cache.get(d, now)?.n).toBe(model.get(d, now));
      }),
    );
  });

  it('never holds more than max entries, digests sharing their first 30 bits included, and a full cache answers only the right value or nothing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer(), fc.array(op, { maxLength: 200 }), (max, salt, ops) => {
        const cache = new DigestCache<Box>(max, salt);
        const model = new Model();
        let now = 0;
        for (const o of ops) {
          if (o.kind === 'tick') now += o.ms;
          else if (o.kind === 'set') {
            cache.set(o.d, box(o.n), now + o.ttl, now);
            model.set(o.d, o.n, now + o.ttl);
            expect(cache.get(o.d, now)?.n).toBe(o.n);
          } else if (o.kind === 'get') {
            // Evicted (a miss) is allowed; another digest's value, or one deleted, never.
            const got = cache.get(o.d, now);
            const want = model.get(o.d, now);
            if (got !== undefined) {
              expect(got.n).toBe(want);
              expect(got.digestKey).toBe(o.d);
            }
          } else {
            cache.delete(o.d);
            model.delete(o.d);
            expect(cache.get(o.d, now)).toBeUndefined();
          }
          expect(cache.size).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('two digests sharing their integer fill a cache of one entry with one, not two', () => {
    // Same first 30 bits ('d' and 'e' differ in the lowest two bits of the fourth character).
    const a = `abcd${'\u0001'.repeat(28)}`;
    const b = `abce${'\u0001'.repeat(28)}`;
    const cache = new DigestCache<Box>(1, 0);
    cache.set(a, box(1), 100, 0);
    cache.set(b, box(2), 100, 0);
    expect(cache.size).toBe(1);
    expect(cache.get(b, 0)?.n).toBe(2);
    expect(cache.get(a, 0)).toBeUndefined();
  });
});
