/**
 * Key text is refused in every stored field (a key's name, scopes,
 * metadata values and member names, rate-limit policy names, which go out in the
 * `RateLimit-Policy` header of every request): whole keys and mangled ones, of any
 * prefix, each a 400 `invalid_request` naming the field and quoting none of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mangledKey, rejectionOf, secretLeak } from '@keyset/test-support';
import { KeysetError, toProblem } from '../errors.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'ks_live', lastUsed: false });
const admin = createKeyAdmin(keyring);

const refusal = (run: () => Promise<unknown>): Promise<KeysetError> => rejectionOf(run(), KeysetError);

/** A name of the same characters the policy-name rule allows, so only the key shape can refuse it. */
const asPolicyName = (text: string): string => text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);

describe('key-shaped text in stored fields', () => {
  it('is refused in name, scopes, metadata values and names, and rate-limit names, naming the field', async () => {
    const existing = await admin.issue({ name: 'target', scopes: [] });
    await fc.assert(
      fc.asyncProperty(mangledKey, fc.constantFrom('', 'for ', 'x'), async ({ key, sent }, before) => {
        const text = `${before}${sent}`;
        const cases: [string, () => Promise<unknown>][] = [
          ['name', () => admin.issue({ name: text, scopes: [] })],
          ['scopes[1]', () => admin.issue({ name: 'n', scopes: ['orders:read', asPolicyName(text)] })],
          ['metadata', () => admin.issue({ name: 'n', scopes: [], metadata: { owner: text } })],
          ['metadata', () => admin.issue({ name: 'n', scopes: [], metadata: { tags: ['a', { [text]: 1 }] } })],
          ['metadata', () => admin.update(existing.record.id, { metadata: { note: text } })],
          ['rateLimits[1].name', () => admin.issue({ name: 'n', scopes: [], rateLimits: [{ limit: 1, windowSeconds: 1 }, { name: asPolicyName(text), limit: 5, windowSeconds: 60 }] })],
          ['rateLimits[0].name', () => admin.updateLimits(existing.record.id, { rateLimits: [{ name: asPolicyName(text), limit: 5, windowSeconds: 60 }] })],
        ];
        for (const [field, run] of cases) {
          const error = await refusal(run);
          const { status, body } = toProblem(error, { instance: '/api/keys' });
          expect({ status, code: body.code, field: body.field }, `${field}: ${text}`).toEqual({ status: 400, code: 'invalid_request', field });
          expect(secretLeak(`${error.message}\n${JSON.stringify(body)}`, [key])).toBeUndefined();
        }
      }),
      { numRuns: 150 },
    );
  });

  it('accepts what operators store: names, ids, hex digests, UUIDs, long words', async () => {
    const ordinary = ['CI deploy bot', 'key_7Hq2mXbP0aLr9sVtY3eWcN', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', '550e8400-e29b-41d4-a716-446655440000', 'internationalization-localization', 'x'.repeat(60)];
    for (const text of ordinary) {
      const { record } = await admin.issue({
        name: text,
        scopes: ['orders:read'],
        metadata: { [text]: text, list: [text] },
        rateLimits: [{ name: asPolicyName(text), limit: 5, windowSeconds: 60 }],
      });
      expect(record.name).toBe(text);
    }
  });

  it('a rate-limit name the policy rule refuses is refused without quoting it', async () => {
    const long = `ks_live_${'A1b2C3d4E5'.repeat(10)}`;
    const error = await refusal(() => admin.issue({ name: 'n', scopes: [], rateLimits: [{ name: long, limit: 5, windowSeconds: 60 }] }));
    expect(error.extensions).toEqual({ field: 'rateLimits[0].name' });
    expect(JSON.stringify(toProblem(error).body)).not.toContain('A1b2C3d4');
  });
});
