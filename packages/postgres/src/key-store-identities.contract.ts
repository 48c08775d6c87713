/**
 * The KeyStore contract, identities: insertIdentity / findByDigest, updateIdentity,
 * recordLeak, getIdentity: one part of `describeKeyStoreContract` (key-store.contract.ts),
 * which registers it for each backend.
 * @module
 */
import type { StoredIdentity } from '@keyset/core/adapter';
import { describe, expect, it } from 'vitest';
import { at, HOUR, makeIdentity, makeSecret, randomDigest, type ContractRun } from './key-store-fixtures.test-support.ts';

/** Registers this part of the contract; `t` holds the store of the running test. */
export function describeIdentities(t: ContractRun): void {
  describe('insertIdentity / findByDigest', () => {
    it('stores an identity with its first secret, every field intact', async () => {
      const { identity, secret } = await t.issue(
        {
          name: 'Ops – reporting ✓',
          scopes: ['orders:read', 'reports:read'],
          rateLimit: { limit: 120, windowSeconds: 60 },
          expiresAt: at(30 * 24 * HOUR),
        },
        { lastUsedAt: at(5), expiresAt: at(HOUR) },
      );
      expect(await t.store.findByDigest(secret.digest)).toEqual({ identity, secret });
    });

    it('inserts a key for an owner only while the owner row of its incarnation exists, and gives a found key that owner only', async () => {
      if (typeof t.store.insertOwner !== 'function' || typeof t.store.deleteOwner !== 'function') return;
      const owner = { id: 'cus_inc', incarnation: 'inc_first', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
      expect(await t.store.insertOwner(owner)).toBe(true);
      const kept = makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_first' });
      const keptSecret = makeSecret();
      expect(await t.store.insertIdentity(kept, keptSecret)).toBe(true);
      const other = makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_other' });
      expect(await t.store.insertIdentity(other, makeSecret())).toBe(false);
      expect(await t.store.getIdentity(other.id)).toBeUndefined();
      expect(await t.store.insertIdentity(makeIdentity({ ownerId: 'cus_none', ownerIncarnation: 'inc_first' }), makeSecret())).toBe(false);
      expect((await t.store.findByDigest(keptSecret.digest))?.owner?.id).toBe('cus_inc');
      // Deleted, then created again: the key is revoked, and the new owner row does not own it.
      expect(await t.store.deleteOwner('cus_inc', at(1))).toBe(true);
      expect(await t.store.insertIdentity(makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_first' }), makeSecret())).toBe(false);
      expect(await t.store.insertOwner({ ...owner, incarnation: 'inc_second', createdAt: at(2) })).toBe(true);
      expect((await t.store.findByDigest(keptSecret.digest))?.owner).toBeNull();
      expect((await t.store.getIdentity(kept.id))?.identity.revokedAt).toEqual(at(1));
      expect((await t.store.listIdentities({ take: 10, ownerId: 'cus_inc' })).keys.map((k) => k.identity.id)).toEqual([kept.id]);
    });

    it('keeps empty scopes, no rate limit, null timestamps and a fractional window', async () => {
      const a = await t.issue({ scopes: [], rateLimit: null });
      const b = await t.issue({ rateLimit: { limit: 1, windowSeconds: 0.5 } });
      expect(await t.store.findByDigest(a.secret.digest)).toEqual(a);
      expect(await t.store.findByDigest(b.secret.digest)).toEqual(b);
    });

    it('gives back metadata, prefix and IP allowlist exactly as written', async () => {
      const metadata = {
        plan: 'pro',
        zeta: 1,
        alpha: [1.5, -0, true, null, 'ünïcødé ✓ 😀'],
        nested: { deeper: { deepest: { x: 'y' } } },
        ['__proto__']: 'kept as a member',
      };
      const a = await t.issue({ metadata: JSON.parse(JSON.stringify(metadata)) as StoredIdentity['metadata'], ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'] });
      const b = await t.issue({ prefix: null });
      const found = await t.store.findByDigest(a.secret.digest);
      expect(found).toEqual(a);
      // Member order survives (JSON text compared, not just deep equality).
      expect(JSON.stringify(found?.identity.metadata)).toBe(JSON.stringify(a.identity.metadata));
      expect(Object.getPrototypeOf(found?.identity.metadata)).toBe(Object.prototype);
      expect((await t.store.getIdentity(a.identity.id))?.identity).toEqual(a.identity);
      expect((await t.store.findByDigest(b.secret.digest))?.identity.prefix).toBeNull();
    });

    it('resolves undefined for an unknown digest', async () => {
      await t.issue();
      expect(await t.store.findByDigest(randomDigest())).toBeUndefined();
    });

    it('rejects a duplicate digest and creates nothing', async () => {
      const first = await t.issue();
      const second = makeIdentity();
      await expect(t.store.insertIdentity(second, makeSecret({ digest: first.secret.digest }))).rejects.toThrow();
      expect(await t.store.getIdentity(second.id)).toBeUndefined();
      expect((await t.store.findByDigest(first.secret.digest))?.identity.id).toBe(first.identity.id);
    });

    it('rejects a duplicate identity id', async () => {
      const first = await t.issue();
      const fresh = makeSecret();
      await expect(t.store.insertIdentity({ ...first.identity, name: 'other' }, fresh)).rejects.toThrow();
      expect(await t.store.findByDigest(fresh.digest)).toBeUndefined();
      expect((await t.store.getIdentity(first.identity.id))?.identity.name).toBe(first.identity.name);
    });

    it('returns records the caller may mutate without touching the store', async () => {
      const { identity, secret } = await t.issue({ scopes: ['a:b'] });
      const found = await t.store.findByDigest(secret.digest);
      found?.identity.scopes.push('keys:admin');
      expect((await t.store.findByDigest(secret.digest))?.identity.scopes).toEqual(identity.scopes);
    });
  });

  describe('updateIdentity', () => {
    it('replaces only the fields given and returns the key as it now is', async () => {
      const { identity, secret } = await t.issue({ metadata: { a: 1 }, ipAllowlist: ['10.0.0.0/8'] });
      const afterMetadata = await t.store.updateIdentity?.(identity.id, { metadata: { b: [2] } });
      expect(afterMetadata?.identity).toEqual({ ...identity, metadata: { b: [2] } });
      expect(afterMetadata?.secrets).toEqual([secret]);
      const afterList = await t.store.updateIdentity?.(identity.id, { ipAllowlist: null });
      expect(afterList?.identity).toEqual({ ...identity, metadata: { b: [2] }, ipAllowlist: null });
      await t.store.updateIdentity?.(identity.id, { ipAllowlist: ['::1/128'], metadata: {} });
      expect((await t.store.findByDigest(secret.digest))?.identity).toEqual({ ...identity, metadata: {}, ipAllowlist: ['::1/128'] });
    });

    it('resolves undefined for an unknown id and changes nothing else', async () => {
      const { identity } = await t.issue();
      expect(await t.store.updateIdentity?.('key_unknown', { metadata: { x: 1 } })).toBeUndefined();
      expect((await t.store.getIdentity(identity.id))?.identity).toEqual(identity);
    });
  });

  describe('recordLeak', () => {
    it('sets leakedAt and leakUrl once, revoked or not; a later report changes neither', async () => {
      const { identity, secret } = await t.issue();
      expect(t.store.recordLeak).toBeTypeOf('function');
      expect((await t.store.getIdentity(identity.id))?.identity.leakedAt ?? null).toBeNull();
      expect(await t.store.recordLeak!(identity.id, at(5), 'https://github.com/o/r/blob/main/.env')).toBe(true);
      expect(await t.store.recordLeak!(identity.id, at(9), 'https://github.com/o/r/issues/2')).toBe(true);
      const reported = { ...identity, leakedAt: at(5), leakUrl: 'https://github.com/o/r/blob/main/.env' };
      expect((await t.store.getIdentity(identity.id))?.identity).toEqual(reported);
      expect((await t.store.findByDigest(secret.digest))?.identity).toEqual(reported);
      expect((await t.store.listIdentities({ take: 5 })).keys.map((k) => k.identity)).toEqual([reported]);
      const revoked = await t.issue({ revokedAt: at(1) });
      expect(await t.store.recordLeak!(revoked.identity.id, at(7), null)).toBe(true);
      expect((await t.store.getIdentity(revoked.identity.id))?.identity).toMatchObject({ leakedAt: at(7), leakUrl: null, revokedAt: at(1) });
    });

    it('keeps one whole report when two arrive at once', async () => {
      const { identity } = await t.issue();
      await Promise.all([t.store.recordLeak!(identity.id, at(1), 'https://a.example/1'), t.store.recordLeak!(identity.id, at(2), 'https://a.example/2')]);
      const { leakedAt, leakUrl } = (await t.store.getIdentity(identity.id))!.identity;
      expect([[at(1), 'https://a.example/1'], [at(2), 'https://a.example/2']]).toContainEqual([leakedAt, leakUrl]);
    });

    it('resolves false for an unknown identity and touches no other', async () => {
      const { identity } = await t.issue();
      expect(await t.store.recordLeak!('key_unknown', at(1), null)).toBe(false);
      expect((await t.store.getIdentity(identity.id))?.identity).toEqual(identity);
    });

    it('an identity inserted with a leak gives it back', async () => {
      const { identity } = await t.issue({ leakedAt: at(3), leakUrl: 'https://github.com/o/r' });
      expect((await t.store.getIdentity(identity.id))?.identity).toEqual(identity);
    });
  });

  describe('getIdentity', () => {
    it('returns the identity with every secret, newest first', async () => {
      const { identity, secret } = await t.issue();
      const newer = makeSecret({ createdAt: at(HOUR) });
      expect(await t.store.addSecret(identity.id, newer, at(2 * HOUR))).toBe(true);
      const key = await t.store.getIdentity(identity.id);
      expect(key?.identity).toEqual(identity);
      expect(key?.secrets.map((s) => s.digest)).toEqual([newer.digest, secret.digest]);
    });

    it('orders secrets created at the same instant by insertion, the latest first', async () => {
      const { identity, secret } = await t.issue();
      const second = makeSecret();
      const third = makeSecret();
      await t.store.addSecret(identity.id, second, at(HOUR));
      await t.store.addSecret(identity.id, third, at(HOUR));
      const key = await t.store.getIdentity(identity.id);
      expect(key?.secrets.map((s) => s.digest)).toEqual([third.digest, second.digest, secret.digest]);
    });

    it('resolves undefined for an unknown id', async () => {
      await t.issue();
      expect(await t.store.getIdentity('key_unknown')).toBeUndefined();
    });
  });
}
