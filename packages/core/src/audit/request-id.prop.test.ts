/**
 * Request ids: the safe form a client's `X-Request-Id` must have to be echoed, logged and
 * stored, and what replaces it otherwise. No key, whole or cut to 8 or more characters,
 * split, recased or with a separator typed in, survives `requestIdFrom`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyFrom, mangledKey, secretLeak } from '@keyset/test-support';
import { generateKey } from '../keys/key-format.ts';
import { isWellFormedRequestId, requestIdFrom } from './request-id.ts';

const GENERATED = /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('keeps the ids clients and proxies send in the safe form', () => {
    for (const id of ['req_1', 'web-4711', '3f2b8c1e-5d6a-4e7f-9a0b-1c2d3e4f5a6b', 'req_3F2B8C1E-5D6A-4E7F-9A0B-1C2D3E4F5A6B', 'a.b:c_d-e', 'x'.repeat(7), '1234567.1234567']) {
      expect(isWellFormedRequestId(id), id).toBe(true);
      expect(requestIdFrom(id)).toBe(id);
    }
    expect(requestIdFrom(`r${'-'.repeat(63)}`)).toHaveLength(64);
  });

  it('replaces anything else with a new req_<uuid>: absent, empty, too long, other characters, 8 letters and digits in a row', () => {
    const key = generateKey('acme_live');
    for (const header of [undefined, null, '', 'x'.repeat(65), 'two words', 'a/b', 'é', 'req=1', '12345678', 'abcdefgh', '01HZX3K9W8Q7R6T5Y4U3I2O1P0', '4bf92f3577b34da6a3ce929d0e0e4736', key, key.slice(-20), key.slice(-8)]) {
      expect(isWellFormedRequestId(header), String(header)).toBe(false);
      expect(requestIdFrom(header)).toMatch(GENERATED);
    }
    // Each replacement is new.
    expect(requestIdFrom(key)).not.toBe(requestIdFrom(key));
  });

  it('what it returns is always in the safe form, and holds no 8 characters of a key sent in it however it was mangled', () => {
    const cut = fc.record({ seed: fc.integer(), start: fc.nat({ max: 50 }), length: fc.integer({ min: 8, max: 64 }), sep: fc.constantFrom('', '.', '-', '_', ':'), every: fc.integer({ min: 1, max: 12 }), lower: fc.boolean() });
    fc.assert(
      fc.property(fc.oneof(mangledKey.map(({ key, sent }) => ({ key, sent })), cut.map((c) => {
        const key = keyFrom('ks_live', c.seed);
        let text = key.slice(Math.min(c.start, key.length - 8)).slice(0, c.length);
        if (c.lower) text = text.toLowerCase();
        if (c.sep !== '') text = (text.match(new RegExp(`.{1,${c.every}}`, 'g')) ?? []).join(c.sep);
        return { key, sent: text };
      })), ({ key, sent }) => {
        const id = requestIdFrom(sent);
        expect(isWellFormedRequestId(id)).toBe(true);
        expect(secretLeak(id, [key]), `${sent} → ${id}`).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
