/**
 * The KeyStore contract, roles (stored by name, held by keys and owners, found with a key)
 * and a key's rate limits and quota: one part of `describeKeyStoreContract`
 * (key-store.contract.ts), which registers it for each backend.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { at, type ContractRun } from './key-store-fixtures.test-support.ts';

/** Registers this part of the contract; `t` holds the store of the running test. */
export function describeRolesAndLimits(t: ContractRun): void {
  describe('roles', () => {
    const role = (name: string, permissions: string[]) => ({ name, permissions, description: `the ${name}`, createdAt: at(1), updatedAt: at(1) });

    it('stores roles by name, and a found key carries its own roles and its owner\'s, only when it holds any', async () => {
      expect(await t.store.insertRole!(role('reader', ['orders:read']))).toBe(true);
      expect(await t.store.insertRole!(role('reader', ['x:y']))).toBe(false);
      expect(await t.store.insertRole!(role('analyst', ['reports:read', 'orders:read']))).toBe(true);
      expect(await t.store.getRole!('reader')).toEqual(role('reader', ['orders:read']));
      expect((await t.store.listRoles!()).map((r) => r.name)).toEqual(['analyst', 'reader']);
      await t.store.insertOwner!({ id: 'cus_r', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null });
      const plain = await t.issue({ ownerId: 'cus_r' });
      expect((await t.store.findByDigest(plain.secret.digest))?.roles).toBeUndefined();
      expect(await t.store.setRoles!({ type: 'key', id: plain.identity.id }, ['reader'])).toBe('set');
      expect(await t.store.setRoles!({ type: 'owner', id: 'cus_r' }, ['analyst', 'reader'])).toBe('set');
      const found = await t.store.findByDigest(plain.secret.digest);
      const held = [...(found?.roles ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
      expect(held.map((r) => r.name)).toEqual(['analyst', 'reader', 'reader']);
      expect(held[0]).toEqual({ name: 'analyst', permissions: ['reports:read', 'orders:read'] });
      expect(await t.store.rolesOf!({ type: 'owner', id: 'cus_r' })).toEqual(['analyst', 'reader']);
      expect(await t.store.rolesOf!({ type: 'key', id: plain.identity.id })).toEqual(['reader']);
      expect(await t.store.rolesOf!({ type: 'key', id: 'key_none' })).toBeUndefined();
    });

    it('setRoles replaces the set, refuses an unknown role or holder changing nothing; deleteRole takes it from every holder', async () => {
      await t.store.insertRole!(role('a', ['p:a']));
      await t.store.insertRole!(role('b', ['p:b']));
      const { identity, secret } = await t.issue();
      expect(await t.store.setRoles!({ type: 'key', id: identity.id }, ['a', 'b'])).toBe('set');
      expect(await t.store.setRoles!({ type: 'key', id: identity.id }, ['b', 'zz'])).toBe('unknown_role');
      expect(await t.store.rolesOf!({ type: 'key', id: identity.id })).toEqual(['a', 'b']);
      expect(await t.store.setRoles!({ type: 'key', id: 'key_none' }, ['a'])).toBe('not_found');
      expect(await t.store.setRoles!({ type: 'owner', id: 'nobody' }, [])).toBe('not_found');
      expect(await t.store.setRoles!({ type: 'key', id: identity.id }, ['b'])).toBe('set');
      expect(await t.store.rolesOf!({ type: 'key', id: identity.id })).toEqual(['b']);
      const updated = await t.store.updateRole!('b', { permissions: ['p:c'], updatedAt: at(5) });
      expect(updated).toEqual({ ...role('b', ['p:c']), updatedAt: at(5) });
      expect((await t.store.findByDigest(secret.digest))?.roles).toEqual([{ name: 'b', permissions: ['p:c'] }]);
      expect(await t.store.updateRole!('zz', { description: 'x', updatedAt: at(5) })).toBeUndefined();
      expect(await t.store.deleteRole!('b')).toBe(true);
      expect(await t.store.deleteRole!('b')).toBe(false);
      expect(await t.store.rolesOf!({ type: 'key', id: identity.id })).toEqual([]);
      await t.store.insertRole!(role('b', ['p:b']));
      expect((await t.store.findByDigest(secret.digest))?.roles).toBeUndefined();
    });

    it("an owner's roles belong to its incarnation: an owner created again under the id holds none", async () => {
      await t.store.insertRole!(role('a', ['p:a']));
      const owner = { id: 'cus_x', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
      await t.store.insertOwner!(owner);
      expect(await t.store.setRoles!({ type: 'owner', id: 'cus_x' }, ['a'])).toBe('set');
      expect(await t.store.deleteOwner!('cus_x', at(2))).toBe(true);
      await t.store.insertOwner!({ ...owner, createdAt: at(3) });
      expect(await t.store.rolesOf!({ type: 'owner', id: 'cus_x' })).toEqual([]);
    });
  });

  describe('rate limits and quota', () => {
    it('stores several named limits and a quota, and updateLimits replaces either one, keeping the other', async () => {
      const rateLimits = [
        { name: 'second', limit: 10, windowSeconds: 1, burst: 20 },
        { name: 'day', limit: 10_000, windowSeconds: 86_400 },
      ];
      const quota = { remaining: 1_000_000_000_000, refill: { amount: 5000, interval: 'monthly' as const }, setAt: at(7) };
      const { identity, secret } = await t.issue({ rateLimit: { limit: 10, windowSeconds: 1 }, rateLimits, quota });
      expect(await t.store.findByDigest(secret.digest)).toEqual({ identity, secret });
      expect(t.store.updateLimits).toBeTypeOf('function');
      const quota2 = { remaining: 3, refill: { amount: 9, interval: 3600 }, setAt: at(9) };
      expect(await t.store.updateLimits!(identity.id, { quota: quota2 })).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.identity).toMatchObject({ rateLimits, quota: quota2 });
      expect(await t.store.updateLimits!(identity.id, { rateLimits: [{ limit: 5, windowSeconds: 60 }] })).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.identity).toMatchObject({
        rateLimit: { limit: 5, windowSeconds: 60 },
        rateLimits: [{ limit: 5, windowSeconds: 60 }],
        quota: quota2,
      });
      expect(await t.store.updateLimits!(identity.id, { rateLimits: null, quota: null })).toBe(true);
      expect((await t.store.getIdentity(identity.id))?.identity).toMatchObject({ rateLimit: null, rateLimits: null, quota: null });
      expect(await t.store.updateLimits!('key_unknown', { quota: null })).toBe(false);
    });

    it('keeps the observe (shadow) mode of a rate limit and of a quota, and an owner quotaMode switch changes the mode alone', async () => {
      const store = t.store;
      const rateLimits = [
        { name: 'second', limit: 10, windowSeconds: 1 },
        { name: 'trial', limit: 5, windowSeconds: 1, mode: 'observe' as const },
      ];
      const quota = { remaining: 7, refill: null, setAt: at(7), mode: 'observe' as const };
      const { identity } = await t.issue({ rateLimits, quota });
      expect((await store.getIdentity(identity.id))?.identity).toMatchObject({ rateLimits, quota });
      const enforced = { remaining: 7, refill: null, setAt: at(7) };
      expect(await store.updateLimits!(identity.id, { quota: enforced })).toBe(true);
      expect((await store.getIdentity(identity.id))?.identity.quota).toEqual(enforced);
      if (store.insertOwner === undefined) return;
      const owner = { id: 'cus_shadow', metadata: {}, rateLimits: [{ limit: 3, windowSeconds: 1, mode: 'observe' as const }], quota: { remaining: 4, refill: { amount: 4, interval: 'daily' as const }, setAt: at(3) }, createdAt: at(0), disabledAt: null };
      await store.insertOwner(owner);
      expect(await store.getOwner!('cus_shadow')).toMatchObject({ rateLimits: owner.rateLimits, quota: owner.quota });
      // The mode alone: setAt (the count's generation) and the rest stay as they are.
      expect((await store.updateOwner!('cus_shadow', { quotaMode: 'observe' }))?.quota).toEqual({ ...owner.quota, mode: 'observe' });
      expect((await store.updateOwner!('cus_shadow', { quotaMode: 'enforce' }))?.quota).toEqual(owner.quota);
      // A new quota without a mode keeps the current one, as it keeps the refill.
      await store.updateOwner!('cus_shadow', { quotaMode: 'observe' });
      expect((await store.updateOwner!('cus_shadow', { quota: { remaining: 9, setAt: at(20) } }))?.quota).toEqual({ remaining: 9, refill: owner.quota.refill, setAt: at(20), mode: 'observe' });
      expect((await store.updateOwner!('cus_shadow', { quota: { remaining: 9, setAt: at(30), mode: 'enforce' } }))?.quota).toEqual({ remaining: 9, refill: owner.quota.refill, setAt: at(30) });
      await store.updateOwner!('cus_shadow', { quota: null });
      expect((await store.updateOwner!('cus_shadow', { quotaMode: 'observe' }))?.quota).toBeNull();
    });
  });
}
