/**
 * The KeyStore contract, secrets: addSecret (rotation) and revoke: one part of
 * `describeKeyStoreContract` (key-store.contract.ts), which registers it for each backend.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { at, HOUR, liveAt, makeSecret, MINUTE, mostLiveAtOnce, type ContractRun } from './key-store-fixtures.test-support.ts';

/** Registers this part of the contract; `t` holds the store of the running test. */
export function describeSecrets(t: ContractRun): void {
  describe('addSecret (rotation)', () => {
    it('gives the current secret the overlap, ends every older one now, and keeps the new one as given', async () => {
      const { identity, secret: s1 } = await t.issue();
      const s2 = makeSecret({ createdAt: at(MINUTE) });
      expect(await t.store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
      let secrets = (await t.store.getIdentity(identity.id))?.secrets;
      expect(secrets).toEqual([s2, { ...s1, expiresAt: at(HOUR) }]);

      // The new secret keeps its own expiry; s2 (current) gets the overlap; s1, older and
      // still inside its own overlap, ends at the rotation instant (s3.createdAt).
      const s3 = makeSecret({ createdAt: at(2 * MINUTE), expiresAt: at(365 * 24 * HOUR) });
      expect(await t.store.addSecret(identity.id, s3, at(2 * HOUR))).toBe(true);
      secrets = (await t.store.getIdentity(identity.id))?.secrets;
      expect(secrets).toEqual([s3, { ...s2, expiresAt: at(2 * HOUR) }, { ...s1, expiresAt: at(2 * MINUTE) }]);

      // Overlap 0 (compromise): everything else ends now; an earlier end is never extended.
      const s4 = makeSecret({ createdAt: at(3 * MINUTE) });
      expect(await t.store.addSecret(identity.id, s4, at(3 * MINUTE))).toBe(true);
      secrets = (await t.store.getIdentity(identity.id))?.secrets;
      expect(secrets?.map((s) => [s.digest, s.expiresAt])).toEqual([
        [s4.digest, null],
        [s3.digest, at(3 * MINUTE)],
        [s2.digest, at(3 * MINUTE)],
        [s1.digest, at(2 * MINUTE)],
      ]);
      expect((await t.store.findByDigest(s4.digest))?.secret).toEqual(s4);
      expect(mostLiveAtOnce(secrets ?? [])).toBe(2);
    });

    it('rotating twice within the overlap leaves exactly two live secrets: the newest and the one it replaced', async () => {
      const { identity, secret: original } = await t.issue();
      const first = makeSecret({ createdAt: at(MINUTE) });
      expect(await t.store.addSecret(identity.id, first, at(MINUTE + HOUR))).toBe(true);
      expect(liveAt((await t.store.getIdentity(identity.id))?.secrets ?? [], at(2 * MINUTE)).map((s) => s.digest)).toEqual([
        first.digest,
        original.digest,
      ]);

      const second = makeSecret({ createdAt: at(2 * MINUTE) });
      expect(await t.store.addSecret(identity.id, second, at(2 * MINUTE + HOUR))).toBe(true);
      const secrets = (await t.store.getIdentity(identity.id))?.secrets ?? [];
      expect(secrets).toEqual([
        second,
        { ...first, expiresAt: at(2 * MINUTE + HOUR) },
        { ...original, expiresAt: at(2 * MINUTE) }, // was inside its overlap: ends now
      ]);
      // From the second rotation on, the original is refused; the other two verify until
      // the overlap ends, then only the newest.
      for (const t of [at(2 * MINUTE), at(30 * MINUTE), at(2 * MINUTE + HOUR - 1)]) {
        expect(liveAt(secrets, t).map((s) => s.digest)).toEqual([second.digest, first.digest]);
      }
      expect(liveAt(secrets, at(2 * MINUTE + HOUR)).map((s) => s.digest)).toEqual([second.digest]);
      expect(mostLiveAtOnce(secrets)).toBe(2);
      expect((await t.store.findByDigest(original.digest))?.secret.expiresAt).toEqual(at(2 * MINUTE));
    });

    it('never lengthens a secret: the current one keeps an earlier own end, an ended one keeps its end', async () => {
      const { identity, secret: s1 } = await t.issue({}, { expiresAt: at(10 * MINUTE) });
      const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(20 * MINUTE) });
      expect(await t.store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.secrets).toEqual([s2, s1]); // both ends already earlier

      const s3 = makeSecret({ createdAt: at(15 * MINUTE) }); // s1 ended at 10 min on its own
      expect(await t.store.addSecret(identity.id, s3, at(HOUR))).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.secrets).toEqual([s3, s2, s1]);
    });

    it('gives the overlap to the newest secret still live, not to a newer one that already ended', async () => {
      const { identity, secret: s1 } = await t.issue();
      const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(5 * MINUTE) });
      expect(await t.store.addSecret(identity.id, s2, at(HOUR))).toBe(true); // s1 → 1 h
      const s3 = makeSecret({ createdAt: at(10 * MINUTE) }); // s2 has ended, s1 still verifies
      expect(await t.store.addSecret(identity.id, s3, at(30 * MINUTE))).toBe(true);
      const secrets = (await t.store.getIdentity(identity.id))?.secrets ?? [];
      expect(secrets).toEqual([s3, s2, { ...s1, expiresAt: at(30 * MINUTE) }]);
      expect(mostLiveAtOnce(secrets)).toBe(2);
    });

    it('takes the current secret by creation time, then insertion order, like getIdentity', async () => {
      const { identity, secret: s1 } = await t.issue();
      const s2 = makeSecret(); // same instant as s1: inserted later, so newer
      expect(await t.store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
      const s3 = makeSecret();
      expect(await t.store.addSecret(identity.id, s3, at(2 * HOUR))).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.secrets).toEqual([
        s3,
        { ...s2, expiresAt: at(2 * HOUR) },
        { ...s1, expiresAt: at(0) },
      ]);
    });

    it('does not touch the secrets of other identities', async () => {
      const a = await t.issue();
      const b = await t.issue();
      await t.store.addSecret(a.identity.id, makeSecret(), at(MINUTE));
      expect((await t.store.findByDigest(b.secret.digest))?.secret.expiresAt).toBeNull();
    });

    it('resolves false for an unknown identity and stores nothing', async () => {
      const fresh = makeSecret();
      expect(await t.store.addSecret('key_unknown', fresh, at(HOUR))).toBe(false);
      expect(await t.store.findByDigest(fresh.digest)).toBeUndefined();
    });

    it('resolves false for a revoked identity and changes nothing', async () => {
      const { identity, secret } = await t.issue();
      await t.store.revoke(identity.id, at(HOUR));
      const fresh = makeSecret();
      expect(await t.store.addSecret(identity.id, fresh, at(MINUTE))).toBe(false);
      expect(await t.store.findByDigest(fresh.digest)).toBeUndefined();
      expect((await t.store.findByDigest(secret.digest))?.secret.expiresAt).toEqual(at(HOUR));
    });

    it('is atomic: a duplicate digest rejects and leaves the old secrets as they were', async () => {
      const a = await t.issue();
      const b = await t.issue();
      await expect(t.store.addSecret(a.identity.id, makeSecret({ digest: b.secret.digest }), at(MINUTE))).rejects.toThrow();
      expect((await t.store.getIdentity(a.identity.id))?.secrets).toEqual([a.secret]);
      expect((await t.store.findByDigest(b.secret.digest))?.identity.id).toBe(b.identity.id);
    });
  });

  describe('revoke', () => {
    it('sets revokedAt and ends every secret at once, never extending one', async () => {
      const { identity, secret: s1 } = await t.issue();
      const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(10 * HOUR) });
      await t.store.addSecret(identity.id, s2, at(30 * MINUTE)); // s1 now ends at +30 min
      const s3 = makeSecret({ createdAt: at(2 * MINUTE) });
      await t.store.addSecret(identity.id, s3, at(HOUR)); // s2 ends at +1 h, s1 at +2 min
      expect(await t.store.revoke(identity.id, at(45 * MINUTE))).toBe(true);
      const key = await t.store.getIdentity(identity.id);
      expect(key?.identity.revokedAt).toEqual(at(45 * MINUTE));
      expect(key?.secrets.map((s) => [s.digest, s.expiresAt])).toEqual([
        [s3.digest, at(45 * MINUTE)],
        [s2.digest, at(45 * MINUTE)],
        [s1.digest, at(2 * MINUTE)],
      ]);
    });

    it('keeps the first revocation time when revoked again', async () => {
      const { identity } = await t.issue();
      expect(await t.store.revoke(identity.id, at(HOUR))).toBe(true);
      expect(await t.store.revoke(identity.id, at(2 * HOUR))).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.identity.revokedAt).toEqual(at(HOUR));
    });

    it('resolves false for an unknown identity and touches no other', async () => {
      const other = await t.issue();
      expect(await t.store.revoke('key_unknown', at(HOUR))).toBe(false);
      expect(await t.store.getIdentity(other.identity.id)).toEqual({ identity: other.identity, secrets: [other.secret] });
    });
  });
}
