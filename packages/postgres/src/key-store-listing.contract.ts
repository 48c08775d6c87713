/**
 * The KeyStore contract, listIdentities (cursor and offset), touchLastUsed, and timestamps
 * that round-trip exactly: one part of `describeKeyStoreContract` (key-store.contract.ts),
 * which registers it for each backend.
 * @module
 */
import type { StoredIdentity, StoredSecret } from '@keyset/core/adapter';
import { describe, expect, it } from 'vitest';
import { at, byNewest, HOUR, makeIdentity, makeSecret, MINUTE, randomDigest, T0, walkCursor, type ContractRun } from './key-store-fixtures.test-support.ts';

/** Registers this part of the contract; `t` holds the store of the running test. */
export function describeListingAndUse(t: ContractRun): void {
  describe('listIdentities', () => {
    // 23 identities, created in bursts of 4 at the same millisecond: ids break the ties.
    async function seed(): Promise<StoredIdentity[]> {
      const identities: StoredIdentity[] = [];
      for (let n = 0; n < 23; n += 1) {
        const { identity } = await t.issue(
          { id: `key_${Math.random().toString(36).slice(2, 10)}`, createdAt: at(Math.floor(n / 4) * MINUTE) },
          { createdAt: at(Math.floor(n / 4) * MINUTE) },
        );
        identities.push(identity);
      }
      return identities.sort(byNewest);
    }

    it('resolves no keys when there are none', async () => {
      expect(await t.store.listIdentities({ take: 10 })).toEqual({ keys: [] });
      expect(await t.store.listIdentities({ take: 10, offset: 0, withTotal: true })).toEqual({ keys: [], total: 0 });
    });

    it('orders newest first, ties broken by id descending, with secrets', async () => {
      const expected = await seed();
      const { keys, total } = await t.store.listIdentities({ take: 100 });
      expect(total).toBeUndefined();
      expect(keys.map((k) => k.identity)).toEqual(expected);
      expect(keys.every((k) => k.secrets.length === 1)).toBe(true);
    });

    it.each([1, 3, 4, 5, 22, 23, 24])('walking pages of %i with `after` yields every identity exactly once', async (size) => {
      const expected = await seed();
      const seen = await walkCursor(t.store, size);
      expect(seen.map((k) => k.identity.id)).toEqual(expected.map((i) => i.id));
    });

    it('honours take exactly and never returns the `after` row', async () => {
      const expected = await seed();
      const pivot = expected[6] as StoredIdentity; // shares its createdAt with neighbours
      const { keys } = await t.store.listIdentities({ take: 5, after: { createdAt: pivot.createdAt, id: pivot.id } });
      expect(keys.map((k) => k.identity.id)).toEqual(expected.slice(7, 12).map((i) => i.id));
    });

    it('lists backward (oldest first, newer than `after`) for pages reached through a prevCursor', async () => {
      const expected = await seed();
      const pivot = expected[12] as StoredIdentity;
      const { keys } = await t.store.listIdentities({ take: 5, after: { createdAt: pivot.createdAt, id: pivot.id }, direction: 'backward' });
      expect(keys.map((k) => k.identity.id)).toEqual(expected.slice(7, 12).reverse().map((i) => i.id));
      // Without `after`: from the end, i.e. the oldest identities first.
      const { keys: oldest } = await t.store.listIdentities({ take: 3, direction: 'backward' });
      expect(oldest.map((k) => k.identity.id)).toEqual(expected.slice(-3).reverse().map((i) => i.id));
      const { keys: counted, total } = await t.store.listIdentities({ take: 2, direction: 'backward', withTotal: true });
      expect(counted.map((k) => k.identity.id)).toEqual(expected.slice(-2).reverse().map((i) => i.id));
      expect(total).toBe(23);
    });

    it('pages by offset with the total', async () => {
      const expected = await seed();
      const seen: string[] = [];
      for (let offset = 0; offset < expected.length; offset += 5) {
        const { keys, total } = await t.store.listIdentities({ take: 6, offset, withTotal: true });
        expect(total).toBe(23);
        seen.push(...keys.slice(0, 5).map((k) => k.identity.id));
      }
      expect(seen).toEqual(expected.map((i) => i.id));
    });

    it('counts every identity even past the end, and only when asked', async () => {
      await seed();
      expect(await t.store.listIdentities({ take: 6, offset: 100, withTotal: true })).toEqual({ keys: [], total: 23 });
      expect((await t.store.listIdentities({ take: 6, offset: 20 })).total).toBeUndefined();
      expect((await t.store.listIdentities({ take: 6, offset: 20, withTotal: true })).keys).toHaveLength(3);
    });

    it('includes revoked identities (listing is an admin view)', async () => {
      const { identity } = await t.issue();
      await t.store.revoke(identity.id, at(HOUR));
      const { keys } = await t.store.listIdentities({ take: 10 });
      expect(keys[0]?.identity.revokedAt).toEqual(at(HOUR));
    });
  });

  describe('touchLastUsed', () => {
    it('records the time and never moves it backwards (GREATEST)', async () => {
      const { secret } = await t.issue();
      const lastUsed = async () => (await t.store.findByDigest(secret.digest))?.secret.lastUsedAt;
      await t.store.touchLastUsed([{ digest: secret.digest, at: at(HOUR) }]);
      expect(await lastUsed()).toEqual(at(HOUR));
      await t.store.touchLastUsed([{ digest: secret.digest, at: at(MINUTE) }]);
      expect(await lastUsed()).toEqual(at(HOUR));
      await t.store.touchLastUsed([{ digest: secret.digest, at: at(2 * HOUR) }]);
      expect(await lastUsed()).toEqual(at(2 * HOUR));
    });

    it('takes the latest time when a batch names a digest twice, and ignores unknown digests', async () => {
      const a = await t.issue();
      const b = await t.issue();
      await t.store.touchLastUsed([
        { digest: a.secret.digest, at: at(3 * HOUR) },
        { digest: randomDigest(), at: at(HOUR) },
        { digest: a.secret.digest, at: at(HOUR) },
        { digest: b.secret.digest, at: at(MINUTE) },
      ]);
      expect((await t.store.findByDigest(a.secret.digest))?.secret.lastUsedAt).toEqual(at(3 * HOUR));
      expect((await t.store.findByDigest(b.secret.digest))?.secret.lastUsedAt).toEqual(at(MINUTE));
    });

    it('touches only the named secret, not its siblings', async () => {
      const { identity, secret } = await t.issue();
      const newer = makeSecret();
      await t.store.addSecret(identity.id, newer, at(HOUR));
      await t.store.touchLastUsed([{ digest: newer.digest, at: at(MINUTE) }]);
      expect((await t.store.findByDigest(secret.digest))?.secret.lastUsedAt).toBeNull();
    });

    it('accepts an empty batch without a round trip', async () => {
      const before = t.subject.roundTrips?.();
      await t.store.touchLastUsed([]);
      expect(t.subject.roundTrips?.()).toBe(before);
    });

    it('writes a batch of 1000 updates in one round trip', async () => {
      const keys: StoredSecret[] = [];
      for (let n = 0; n < 1000; n += 50) {
        const chunk = Array.from({ length: 50 }, () => ({ identity: makeIdentity(), secret: makeSecret() }));
        await Promise.all(chunk.map(({ identity, secret }) => t.store.insertIdentity(identity, secret)));
        keys.push(...chunk.map((k) => k.secret));
      }
      const before = t.subject.roundTrips?.();
      await t.store.touchLastUsed(keys.map((s, n) => ({ digest: s.digest, at: at(n) })));
      if (before !== undefined) expect(t.subject.roundTrips?.()).toBe(before + 1);
      const { keys: listed } = await t.store.listIdentities({ take: 1001 });
      const lastUsed = new Map(listed.map((k) => [k.secrets[0]?.digest, k.secrets[0]?.lastUsedAt?.getTime()]));
      expect(keys.every((s, n) => lastUsed.get(s.digest) === T0 + n)).toBe(true);
    });
  });

  describe('timestamps', () => {
    it('round-trip exactly to the millisecond, far in the past and the future', async () => {
      const times = [new Date(-1), new Date(1), new Date('1999-12-31T23:59:59.999Z'), new Date('2999-01-01T00:00:00.001Z')];
      for (const time of times) {
        const { identity, secret } = await t.issue(
          { createdAt: time, expiresAt: time },
          { createdAt: time, expiresAt: time, lastUsedAt: time },
        );
        expect(await t.store.findByDigest(secret.digest)).toEqual({ identity, secret });
      }
    });
  });
}
