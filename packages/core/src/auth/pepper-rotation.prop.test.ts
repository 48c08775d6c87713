import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuthenticationError } from '../errors.ts';
import { createKeyAdmin } from '../admin/key-admin.ts';
import { createKeyring } from './keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import type { Pepper } from '../keys/pepper-ring.ts';

/** Three peppers and plain SHA-256 (`null`): any ordered, non-empty selection is a pepper list. */
const POOL: readonly Pepper[] = ['pepper-0-0123456789abcdef', 'pepper-1-0123456789abcdef', 'pepper-2-0123456789abcdef', null];

type Step =
  | { op: 'peppers'; list: number[] }
  | { op: 'issue' }
  | { op: 'revoke'; n: number }
  | { op: 'verify'; n: number }
  | { op: 'unknown' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.uniqueArray(fc.integer({ min: 0, max: POOL.length - 1 }), { minLength: 1, maxLength: POOL.length }).map((list) => ({ op: 'peppers' as const, list })), weight: 2 },
  { arbitrary: fc.constant({ op: 'issue' as const }), weight: 3 },
  { arbitrary: fc.nat(20).map((n) => ({ op: 'revoke' as const, n })), weight: 1 },
  { arbitrary: fc.nat(20).map((n) => ({ op: 'verify' as const, n })), weight: 5 },
  { arbitrary: fc.constant({ op: 'unknown' as const }), weight: 1 },
);

interface ModelKey {
  key: string;
  id: string;
  /** Index in POOL of the pepper its stored digest was made with. */
  under: number;
  revoked: boolean;
}

describe('pepper rotation (property)', () => {
  // The model: a key verifies under a pepper list exactly when it was issued here, is not
  // revoked, and the pepper its digest is stored under is in the list; once it verified,
  // it is stored under the list's first pepper. So with every pepper in use kept in the
  // list, exactly the issued, unrevoked keys verify, whatever the rotations in between.
  it('any sequence of verifies under any pepper list verifies exactly the keys issued, not revoked, and stored under a listed pepper', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 30 }), async (steps) => {
        const store = createMemoryKeyStore();
        const elsewhere = createKeyAdmin(createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_test', pepper: POOL[0]! }));
        let list = [0];
        const keys: ModelKey[] = [];
        for (const step of steps) {
          if (step.op === 'peppers') {
            list = step.list;
            continue;
          }
          // A fresh keyring per step, caches off, closed at the end of the step: its
          // re-hashes are written before the next step looks.
          const keyring = createKeyring({ store, prefix: 'acme_test', peppers: list.map((n) => POOL[n]!), cache: false, lastUsed: false });
          const admin = createKeyAdmin(keyring);
          if (step.op === 'issue') {
            const { key, record } = await admin.issue({ name: 'k', scopes: [] });
            keys.push({ key, id: record.id, under: list[0]!, revoked: false });
          } else if (step.op === 'unknown') {
            const { key } = await elsewhere.issue({ name: 'stranger', scopes: [] });
            await expect(keyring.verify(key)).rejects.toBeInstanceOf(AuthenticationError);
          } else if (keys.length > 0) {
            const target = keys[step.n % keys.length]!;
            if (step.op === 'revoke') {
              await admin.revoke(target.id);
              target.revoked = true;
            } else {
              const expected = !target.revoked && list.includes(target.under);
              const outcome = await keyring.verify(target.key).then(
                (verified) => verified.id,
                (error: unknown) => (error instanceof AuthenticationError ? 'refused' : error),
              );
              expect(outcome).toBe(expected ? target.id : 'refused');
              if (expected) target.under = list[0]!;
            }
          }
          await keyring.close();
        }
        // The admin's counts agree with the model: live keys per listed pepper.
        const keyring = createKeyring({ store, prefix: 'acme_test', peppers: list.map((n) => POOL[n]!), cache: false, lastUsed: false });
        const counts = await createKeyAdmin(keyring).pepperCounts();
        const listed = counts.filter((c) => c.pepper !== null).map((c) => c.count);
        expect(listed).toEqual(list.map((p) => keys.filter((k) => !k.revoked && k.under === p).length));
        expect(counts.reduce((sum, c) => sum + c.count, 0)).toBe(keys.filter((k) => !k.revoked).length);
      }),
      { numRuns: 150 },
    );
  });
});
