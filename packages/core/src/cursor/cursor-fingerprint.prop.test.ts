/**
 * The fingerprint cache answers a filter set seen before from memory; every answer must
 * still be the fingerprint of the filters' canonical text, computed afresh, whatever came
 * before it (hits, misses, evictions).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import { createFingerprintCache, fingerprintWith, scopePrefix } from './cursor-fingerprint.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';

const sort = defineSortSpec([{ key: 'id', dir: 'asc', type: 'int', unique: true }]);
const prefix = scopePrefix('GET /things', sort);

const filters = fc.oneof(
  fc.constant(undefined),
  fc.constant({}),
  fc.record({ status: fc.constantFrom('paid', 'open', '', 'é', '"', '1') }),
  fc.dictionary(fc.constantFrom('status', 'tag', 'a', '"', ''), fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: 0, max: 3 }), fc.constant(undefined), fc.constant(null), fc.boolean()), { maxKeys: 3 }),
  fc.constantFrom('x', 'y').map((v) => Object.assign(Object.create(null) as Record<string, unknown>, { status: v })),
  fc.constantFrom(['paid'] as unknown as Record<string, unknown>, { status: ['paid'] }, { status: 5n }, { 0: 'paid' }),
);

describe('fingerprint cache', () => {
  it('answers every filter set with the fingerprint of its canonical text, across hits and misses', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(filters, { minLength: 1, maxLength: 30 }), async (sequence) => {
        const cache = createFingerprintCache(nodeCrypto, prefix);
        for (const f of sequence) expect(await cache.get(f)).toBe(await fingerprintWith(nodeCrypto, prefix, f));
      }),
      { numRuns: 300 },
    );
  });

  it('stays right past its bound: thousands of distinct values, then the first ones again', async () => {
    const cache = createFingerprintCache(nodeCrypto, prefix);
    const values = Array.from({ length: 2600 }, (_, i) => `v${i}`);
    for (const round of [0, 1])
      for (const v of round === 0 ? values : values.slice(0, 50)) {
        expect(await cache.get({ status: v })).toBe(await fingerprintWith(nodeCrypto, prefix, { status: v }));
      }
  });

  it('refuses what canonicalJson refuses, even after {} is cached (a Map or class instance has no members of its own either)', async () => {
    const cache = createFingerprintCache(nodeCrypto, prefix);
    await cache.get({});
    expect(() => cache.get(new Map() as unknown as Record<string, unknown>)).toThrow(TypeError);
    expect(() => cache.get(new (class Filters {})() as unknown as Record<string, unknown>)).toThrow(TypeError);
  });
});
