/**
 * The secret-scanning contract: a scanner that registers
 * `keyPattern(keyring.prefixes)` and checks each match with `isWellFormedKey` finds every
 * key any keyring issues, whatever surrounds it, and reports nothing the checksum refuses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { isWellFormedKey } from './is-well-formed-key.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { keyPattern } from './key-format.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from './memory-key-store.ts';

const prefixArb = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,5}){0,2}$/);
/** One to three distinct prefixes: a keyring's environments. */
const prefixesArb = fc.uniqueArray(prefixArb, { minLength: 1, maxLength: 3 });
/** Text between keys: at least one character a key is not made of, so each key stays whole (two keys glued together are one token, which the boundaries refuse). */
const gapArb = fc.string({ unit: fc.constantFrom(' ', '\n', '"', "'", '=', ':', ',', '-', '/', '.', '?', '&', '#', '(', ')', 'é'), minLength: 1, maxLength: 6 });
const BASE62_OR_SEPARATOR = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_';

/** Keys issued by a real keyring over `prefixes`, `count` of them, cycling the environments. */
async function issueKeys(prefixes: readonly string[], count: number): Promise<string[]> {
  const environments = Object.fromEntries(prefixes.map((p, i) => [`e${i}`, p]));
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: environments, lastUsed: false });
  expect([...keyring.prefixes].sort()).toEqual([...prefixes].sort());
  const admin = createKeyAdmin(keyring);
  const keys: string[] = [];
  for (let i = 0; i < count; i++) keys.push((await admin.issue({ name: `k${i}`, scopes: [], environment: `e${i % prefixes.length}` })).key);
  return keys;
}

/** What a scanner reports: pattern matches that pass the offline checksum check. */
function scan(text: string, prefixes: readonly string[]): string[] {
  return [...text.matchAll(new RegExp(keyPattern(prefixes), 'g'))].map((m) => m[0]).filter((m) => isWellFormedKey(m, prefixes));
}

describe('keyPattern + isWellFormedKey (secret scanning)', () => {
  it('find every key any keyring issues, of every prefix, wherever it sits in text', async () => {
    await fc.assert(
      fc.asyncProperty(prefixesArb, fc.integer({ min: 1, max: 5 }), fc.array(gapArb, { minLength: 6, maxLength: 6 }), async (prefixes, count, gaps) => {
        const keys = await issueKeys(prefixes, count);
        const text = keys.map((key, i) => `${gaps[i]}${key}`).join('') + gaps[5];
        expect(scan(text, prefixes)).toEqual(keys);
        for (const key of keys) expect(isWellFormedKey(key, prefixes)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('report nothing the checksum refuses: any one character of a key changed', async () => {
    await fc.assert(
      fc.asyncProperty(prefixesArb, fc.nat(), fc.constantFrom(...BASE62_OR_SEPARATOR), gapArb, async (prefixes, at, replacement, gap) => {
        const [key] = (await issueKeys(prefixes, 1)) as [string];
        const i = at % key.length;
        fc.pre(key[i] !== replacement);
        const changed = key.slice(0, i) + replacement + key.slice(i + 1);
        expect(isWellFormedKey(changed, prefixes)).toBe(false);
        expect(scan(`${gap}${changed}${gap}`, prefixes)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('does not report a key of a prefix it was not given, nor part of a longer token', async () => {
    const [live] = (await issueKeys(['acme_live'], 1)) as [string];
    expect(isWellFormedKey(live, ['acme_test'])).toBe(false);
    expect(isWellFormedKey(live, 'acme_live')).toBe(true);
    expect(isWellFormedKey(`${live} `, 'acme_live')).toBe(false);
    expect(scan(`x${live} ${live}x _${live}`, ['acme_live'])).toEqual([]);
    expect(isWellFormedKey(undefined as unknown as string, 'acme_live')).toBe(false);
  });

  it('refuses a bad prefix list with a ConfigError', () => {
    expect(() => isWellFormedKey('x', [])).toThrow(ConfigError);
    expect(() => isWellFormedKey('x', ['Acme'])).toThrow(/prefix must match/);
  });
});
