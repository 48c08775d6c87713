/**
 * The behaviour every `KeyStore` must have, as a reusable vitest suite. Not a test file
 * itself: `*.test.ts` files call `describeKeyStoreContract` once per backend (PGlite, a
 * real PostgreSQL server), so both are held to exactly the same assertions.
 * @module
 */
import type { KeyStore } from '@keyset/core';
import type { StoredIdentity, StoredKey, StoredSecret } from '@keyset/core/adapter';
import { beforeEach, describe, expect, it } from 'vitest';

/** What the suite needs from a backend: a store over EMPTY tables, per test. */
export interface ContractSubject {
  store: KeyStore;
  /** Statements the store has sent so far, when the harness counts them (round trips). */
  roundTrips?: () => number;
}

const T0 = Date.parse('2025-03-04T05:06:07.891Z');
const at = (ms: number): Date => new Date(T0 + ms);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A fresh 64-hex digest, as the keyring computes them. */
export function randomDigest(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** An identity with a random id (no counter shared between test files), overridable member by member. */
export function makeIdentity(overrides: Partial<StoredIdentity> = {}): StoredIdentity {
  const id = `key_${randomDigest().slice(0, 16)}`;
  return {
    id,
    name: `key ${id.slice(4, 10)}`,
    scopes: ['orders:read'],
    rateLimit: null,
    prefix: 'acme_test',
    metadata: {},
    ipAllowlist: null,
    createdAt: at(0),
    expiresAt: null,
    revokedAt: null,
    ...overrides,
    // Stores answer in canonical form: the single limit is also the one-element list.
    rateLimits: overrides.rateLimits ?? (overrides.rateLimit ? [{ ...overrides.rateLimit }] : null),
    quota: overrides.quota ?? null,
  };
}

export function makeSecret(overrides: Partial<StoredSecret> = {}): StoredSecret {
  const digest = overrides.digest ?? randomDigest();
  return { digest, last4: digest.slice(-4), createdAt: at(0), lastUsedAt: null, expiresAt: null, ...overrides };
}

/** Walks the whole collection in cursor mode, `size` identities per page. */
export async function walkCursor(store: KeyStore, size: number): Promise<StoredKey[]> {
  const seen: StoredKey[] = [];
  let after: { createdAt: Date; id: string } | undefined;
  for (let pages = 0; pages < 10_000; pages += 1) {
    const { keys } = await store.listIdentities(after === undefined ? { take: size + 1 } : { take: size + 1, after });
    const page = keys.slice(0, size);
    seen.push(...page);
    const last = page.at(-1);
    if (keys.length <= size || last === undefined) return seen;
    after = { createdAt: last.identity.createdAt, id: last.identity.id };
  }
  throw new Error('cursor walk does not end');
}

/** The secrets that verify at instant `t`: created by then and not yet ended (`expiresAt > t`). */
export function liveAt(secrets: readonly StoredSecret[], t: Date): StoredSecret[] {
  const ms = t.getTime();
  return secrets.filter((s) => s.createdAt.getTime() <= ms && (s.expiresAt === null || s.expiresAt.getTime() > ms));
}

/**
 * The most secrets of one identity that verify at the same instant, over its whole
 * history as the stored ends describe it (an identity owns one or two: the current
 * secret and, during a rotation's overlap, the one it replaces).
 */
export function mostLiveAtOnce(secrets: readonly StoredSecret[]): number {
  const instants = secrets.flatMap((s) => (s.expiresAt === null ? [s.createdAt] : [s.createdAt, s.expiresAt]));
  return Math.max(0, ...instants.map((t) => liveAt(secrets, t).length));
}

const byNewest = (a: StoredIdentity, b: StoredIdentity): number =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Registers the contract suite for one backend. `makeStore` runs before every test and
 * must return a store over empty tables.
 *
 * @example
 * ```ts
 * describeKeyStoreContract('memory', async () => ({ store: createMemoryKeyStore() }));
 * ```
 */
export function describeKeyStoreContract(name: string, makeStore: () => Promise<ContractSubject>): void {
  describe(`KeyStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: KeyStore;
    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
    });

    async function issue(identity: Partial<StoredIdentity> = {}, secret: Partial<StoredSecret> = {}) {
      const i = makeIdentity(identity);
      const s = makeSecret(secret);
      await store.insertIdentity(i, s);
      return { identity: i, secret: s };
    }

    describe('roles', () => {
      const role = (name: string, permissions: string[]) => ({ name, permissions, description: `the ${name}`, createdAt: at(1), updatedAt: at(1) });

      it('stores roles by name, and a found key carries its own roles and its owner\'s, only when it holds any', async () => {
        expect(await store.insertRole!(role('reader', ['orders:read']))).toBe(true);
        expect(await store.insertRole!(role('reader', ['x:y']))).toBe(false);
        expect(await store.insertRole!(role('analyst', ['reports:read', 'orders:read']))).toBe(true);
        expect(await store.getRole!('reader')).toEqual(role('reader', ['orders:read']));
        expect((await store.listRoles!()).map((r) => r.name)).toEqual(['analyst', 'reader']);
        await store.insertOwner!({ id: 'cus_r', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null });
        const plain = await issue({ ownerId: 'cus_r' });
        expect((await store.findByDigest(plain.secret.digest))?.roles).toBeUndefined();
        expect(await store.setRoles!({ type: 'key', id: plain.identity.id }, ['reader'])).toBe('set');
        expect(await store.setRoles!({ type: 'owner', id: 'cus_r' }, ['analyst', 'reader'])).toBe('set');
        const found = await store.findByDigest(plain.secret.digest);
        const held = [...(found?.roles ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
        expect(held.map((r) => r.name)).toEqual(['analyst', 'reader', 'reader']);
        expect(held[0]).toEqual({ name: 'analyst', permissions: ['reports:read', 'orders:read'] });
        expect(await store.rolesOf!({ type: 'owner', id: 'cus_r' })).toEqual(['analyst', 'reader']);
        expect(await store.rolesOf!({ type: 'key', id: plain.identity.id })).toEqual(['reader']);
        expect(await store.rolesOf!({ type: 'key', id: 'key_none' })).toBeUndefined();
      });

      it('setRoles replaces the set, refuses an unknown role or holder changing nothing; deleteRole takes it from every holder', async () => {
        await store.insertRole!(role('a', ['p:a']));
        await store.insertRole!(role('b', ['p:b']));
        const { identity, secret } = await issue();
        expect(await store.setRoles!({ type: 'key', id: identity.id }, ['a', 'b'])).toBe('set');
        expect(await store.setRoles!({ type: 'key', id: identity.id }, ['b', 'zz'])).toBe('unknown_role');
        expect(await store.rolesOf!({ type: 'key', id: identity.id })).toEqual(['a', 'b']);
        expect(await store.setRoles!({ type: 'key', id: 'key_none' }, ['a'])).toBe('not_found');
        expect(await store.setRoles!({ type: 'owner', id: 'nobody' }, [])).toBe('not_found');
        expect(await store.setRoles!({ type: 'key', id: identity.id }, ['b'])).toBe('set');
        expect(await store.rolesOf!({ type: 'key', id: identity.id })).toEqual(['b']);
        const updated = await store.updateRole!('b', { permissions: ['p:c'], updatedAt: at(5) });
        expect(updated).toEqual({ ...role('b', ['p:c']), updatedAt: at(5) });
        expect((await store.findByDigest(secret.digest))?.roles).toEqual([{ name: 'b', permissions: ['p:c'] }]);
        expect(await store.updateRole!('zz', { description: 'x', updatedAt: at(5) })).toBeUndefined();
        expect(await store.deleteRole!('b')).toBe(true);
        expect(await store.deleteRole!('b')).toBe(false);
        expect(await store.rolesOf!({ type: 'key', id: identity.id })).toEqual([]);
        await store.insertRole!(role('b', ['p:b']));
        expect((await store.findByDigest(secret.digest))?.roles).toBeUndefined();
      });

      it("an owner's roles belong to its incarnation: an owner created again under the id holds none", async () => {
        await store.insertRole!(role('a', ['p:a']));
        const owner = { id: 'cus_x', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
        await store.insertOwner!(owner);
        expect(await store.setRoles!({ type: 'owner', id: 'cus_x' }, ['a'])).toBe('set');
        expect(await store.deleteOwner!('cus_x', at(2))).toBe(true);
        await store.insertOwner!({ ...owner, createdAt: at(3) });
        expect(await store.rolesOf!({ type: 'owner', id: 'cus_x' })).toEqual([]);
      });
    });

    describe('rate limits and quota', () => {
      it('stores several named limits and a quota, and updateLimits replaces either one, keeping the other', async () => {
        const rateLimits = [
          { name: 'second', limit: 10, windowSeconds: 1, burst: 20 },
          { name: 'day', limit: 10_000, windowSeconds: 86_400 },
        ];
        const quota = { remaining: 1_000_000_000_000, refill: { amount: 5000, interval: 'monthly' as const }, setAt: at(7) };
        const { identity, secret } = await issue({ rateLimit: { limit: 10, windowSeconds: 1 }, rateLimits, quota });
        expect(await store.findByDigest(secret.digest)).toEqual({ identity, secret });
        expect(store.updateLimits).toBeTypeOf('function');
        const quota2 = { remaining: 3, refill: { amount: 9, interval: 3600 }, setAt: at(9) };
        expect(await store.updateLimits!(identity.id, { quota: quota2 })).toBe(true);
        expect((await store.getIdentity(identity.id))?.identity).toMatchObject({ rateLimits, quota: quota2 });
        expect(await store.updateLimits!(identity.id, { rateLimits: [{ limit: 5, windowSeconds: 60 }] })).toBe(true);
        expect((await store.getIdentity(identity.id))?.identity).toMatchObject({
          rateLimit: { limit: 5, windowSeconds: 60 },
          rateLimits: [{ limit: 5, windowSeconds: 60 }],
          quota: quota2,
        });
        expect(await store.updateLimits!(identity.id, { rateLimits: null, quota: null })).toBe(true);
        expect((await store.getIdentity(identity.id))?.identity).toMatchObject({ rateLimit: null, rateLimits: null, quota: null });
        expect(await store.updateLimits!('key_unknown', { quota: null })).toBe(false);
      });

      it('keeps the observe (shadow) mode of a rate limit and of a quota, and an owner quotaMode switch changes the mode alone', async () => {
        const rateLimits = [
          { name: 'second', limit: 10, windowSeconds: 1 },
          { name: 'trial', limit: 5, windowSeconds: 1, mode: 'observe' as const },
        ];
        const quota = { remaining: 7, refill: null, setAt: at(7), mode: 'observe' as const };
        const { identity } = await issue({ rateLimits, quota });
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

    describe('insertIdentity / findByDigest', () => {
      it('stores an identity with its first secret, every field intact', async () => {
        const { identity, secret } = await issue(
          {
            name: 'Ops – reporting ✓',
            scopes: ['orders:read', 'reports:read'],
            rateLimit: { limit: 120, windowSeconds: 60 },
            expiresAt: at(30 * 24 * HOUR),
          },
          { lastUsedAt: at(5), expiresAt: at(HOUR) },
        );
        expect(await store.findByDigest(secret.digest)).toEqual({ identity, secret });
      });

      it('inserts a key for an owner only while the owner row of its incarnation exists, and gives a found key that owner only', async () => {
        if (typeof store.insertOwner !== 'function' || typeof store.deleteOwner !== 'function') return;
        const owner = { id: 'cus_inc', incarnation: 'inc_first', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
        expect(await store.insertOwner(owner)).toBe(true);
        const kept = makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_first' });
        const keptSecret = makeSecret();
        expect(await store.insertIdentity(kept, keptSecret)).toBe(true);
        const other = makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_other' });
        expect(await store.insertIdentity(other, makeSecret())).toBe(false);
        expect(await store.getIdentity(other.id)).toBeUndefined();
        expect(await store.insertIdentity(makeIdentity({ ownerId: 'cus_none', ownerIncarnation: 'inc_first' }), makeSecret())).toBe(false);
        expect((await store.findByDigest(keptSecret.digest))?.owner?.id).toBe('cus_inc');
        // Deleted, then created again: the key is revoked, and the new owner row does not own it.
        expect(await store.deleteOwner('cus_inc', at(1))).toBe(true);
        expect(await store.insertIdentity(makeIdentity({ ownerId: 'cus_inc', ownerIncarnation: 'inc_first' }), makeSecret())).toBe(false);
        expect(await store.insertOwner({ ...owner, incarnation: 'inc_second', createdAt: at(2) })).toBe(true);
        expect((await store.findByDigest(keptSecret.digest))?.owner).toBeNull();
        expect((await store.getIdentity(kept.id))?.identity.revokedAt).toEqual(at(1));
        expect((await store.listIdentities({ take: 10, ownerId: 'cus_inc' })).keys.map((k) => k.identity.id)).toEqual([kept.id]);
      });

      it('keeps empty scopes, no rate limit, null timestamps and a fractional window', async () => {
        const a = await issue({ scopes: [], rateLimit: null });
        const b = await issue({ rateLimit: { limit: 1, windowSeconds: 0.5 } });
        expect(await store.findByDigest(a.secret.digest)).toEqual(a);
        expect(await store.findByDigest(b.secret.digest)).toEqual(b);
      });

      it('gives back metadata, prefix and IP allowlist exactly as written', async () => {
        const metadata = {
          plan: 'pro',
          zeta: 1,
          alpha: [1.5, -0, true, null, 'ünïcødé ✓ 😀'],
          nested: { deeper: { deepest: { x: 'y' } } },
          ['__proto__']: 'kept as a member',
        };
        const a = await issue({ metadata: JSON.parse(JSON.stringify(metadata)) as StoredIdentity['metadata'], ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'] });
        const b = await issue({ prefix: null });
        const found = await store.findByDigest(a.secret.digest);
        expect(found).toEqual(a);
        // Member order survives (JSON text compared, not just deep equality).
        expect(JSON.stringify(found?.identity.metadata)).toBe(JSON.stringify(a.identity.metadata));
        expect(Object.getPrototypeOf(found?.identity.metadata)).toBe(Object.prototype);
        expect((await store.getIdentity(a.identity.id))?.identity).toEqual(a.identity);
        expect((await store.findByDigest(b.secret.digest))?.identity.prefix).toBeNull();
      });

      it('resolves undefined for an unknown digest', async () => {
        await issue();
        expect(await store.findByDigest(randomDigest())).toBeUndefined();
      });

      it('rejects a duplicate digest and creates nothing', async () => {
        const first = await issue();
        const second = makeIdentity();
        await expect(store.insertIdentity(second, makeSecret({ digest: first.secret.digest }))).rejects.toThrow();
        expect(await store.getIdentity(second.id)).toBeUndefined();
        expect((await store.findByDigest(first.secret.digest))?.identity.id).toBe(first.identity.id);
      });

      it('rejects a duplicate identity id', async () => {
        const first = await issue();
        const fresh = makeSecret();
        await expect(store.insertIdentity({ ...first.identity, name: 'other' }, fresh)).rejects.toThrow();
        expect(await store.findByDigest(fresh.digest)).toBeUndefined();
        expect((await store.getIdentity(first.identity.id))?.identity.name).toBe(first.identity.name);
      });

      it('returns records the caller may mutate without touching the store', async () => {
        const { identity, secret } = await issue({ scopes: ['a:b'] });
        const found = await store.findByDigest(secret.digest);
        found?.identity.scopes.push('keys:admin');
        expect((await store.findByDigest(secret.digest))?.identity.scopes).toEqual(identity.scopes);
      });
    });

    describe('updateIdentity', () => {
      it('replaces only the fields given and returns the key as it now is', async () => {
        const { identity, secret } = await issue({ metadata: { a: 1 }, ipAllowlist: ['10.0.0.0/8'] });
        const afterMetadata = await store.updateIdentity?.(identity.id, { metadata: { b: [2] } });
        expect(afterMetadata?.identity).toEqual({ ...identity, metadata: { b: [2] } });
        expect(afterMetadata?.secrets).toEqual([secret]);
        const afterList = await store.updateIdentity?.(identity.id, { ipAllowlist: null });
        expect(afterList?.identity).toEqual({ ...identity, metadata: { b: [2] }, ipAllowlist: null });
        await store.updateIdentity?.(identity.id, { ipAllowlist: ['::1/128'], metadata: {} });
        expect((await store.findByDigest(secret.digest))?.identity).toEqual({ ...identity, metadata: {}, ipAllowlist: ['::1/128'] });
      });

      it('resolves undefined for an unknown id and changes nothing else', async () => {
        const { identity } = await issue();
        expect(await store.updateIdentity?.('key_unknown', { metadata: { x: 1 } })).toBeUndefined();
        expect((await store.getIdentity(identity.id))?.identity).toEqual(identity);
      });
    });

    describe('recordLeak', () => {
      it('sets leakedAt and leakUrl once, revoked or not; a later report changes neither', async () => {
        const { identity, secret } = await issue();
        expect(store.recordLeak).toBeTypeOf('function');
        expect((await store.getIdentity(identity.id))?.identity.leakedAt ?? null).toBeNull();
        expect(await store.recordLeak!(identity.id, at(5), 'https://github.com/o/r/blob/main/.env')).toBe(true);
        expect(await store.recordLeak!(identity.id, at(9), 'https://github.com/o/r/issues/2')).toBe(true);
        const reported = { ...identity, leakedAt: at(5), leakUrl: 'https://github.com/o/r/blob/main/.env' };
        expect((await store.getIdentity(identity.id))?.identity).toEqual(reported);
        expect((await store.findByDigest(secret.digest))?.identity).toEqual(reported);
        expect((await store.listIdentities({ take: 5 })).keys.map((k) => k.identity)).toEqual([reported]);
        const revoked = await issue({ revokedAt: at(1) });
        expect(await store.recordLeak!(revoked.identity.id, at(7), null)).toBe(true);
        expect((await store.getIdentity(revoked.identity.id))?.identity).toMatchObject({ leakedAt: at(7), leakUrl: null, revokedAt: at(1) });
      });

      it('keeps one whole report when two arrive at once', async () => {
        const { identity } = await issue();
        await Promise.all([store.recordLeak!(identity.id, at(1), 'https://a.example/1'), store.recordLeak!(identity.id, at(2), 'https://a.example/2')]);
        const { leakedAt, leakUrl } = (await store.getIdentity(identity.id))!.identity;
        expect([[at(1), 'https://a.example/1'], [at(2), 'https://a.example/2']]).toContainEqual([leakedAt, leakUrl]);
      });

      it('resolves false for an unknown identity and touches no other', async () => {
        const { identity } = await issue();
        expect(await store.recordLeak!('key_unknown', at(1), null)).toBe(false);
        expect((await store.getIdentity(identity.id))?.identity).toEqual(identity);
      });

      it('an identity inserted with a leak gives it back', async () => {
        const { identity } = await issue({ leakedAt: at(3), leakUrl: 'https://github.com/o/r' });
        expect((await store.getIdentity(identity.id))?.identity).toEqual(identity);
      });
    });

    describe('getIdentity', () => {
      it('returns the identity with every secret, newest first', async () => {
        const { identity, secret } = await issue();
        const newer = makeSecret({ createdAt: at(HOUR) });
        expect(await store.addSecret(identity.id, newer, at(2 * HOUR))).toBe(true);
        const key = await store.getIdentity(identity.id);
        expect(key?.identity).toEqual(identity);
        expect(key?.secrets.map((s) => s.digest)).toEqual([newer.digest, secret.digest]);
      });

      it('orders secrets created at the same instant by insertion, the latest first', async () => {
        const { identity, secret } = await issue();
        const second = makeSecret();
        const third = makeSecret();
        await store.addSecret(identity.id, second, at(HOUR));
        await store.addSecret(identity.id, third, at(HOUR));
        const key = await store.getIdentity(identity.id);
        expect(key?.secrets.map((s) => s.digest)).toEqual([third.digest, second.digest, secret.digest]);
      });

      it('resolves undefined for an unknown id', async () => {
        await issue();
        expect(await store.getIdentity('key_unknown')).toBeUndefined();
      });
    });

    describe('addSecret (rotation)', () => {
      it('gives the current secret the overlap, ends every older one now, and keeps the new one as given', async () => {
        const { identity, secret: s1 } = await issue();
        const s2 = makeSecret({ createdAt: at(MINUTE) });
        expect(await store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
        let secrets = (await store.getIdentity(identity.id))?.secrets;
        expect(secrets).toEqual([s2, { ...s1, expiresAt: at(HOUR) }]);

        // The new secret keeps its own expiry; s2 (current) gets the overlap; s1, older and
        // still inside its own overlap, ends at the rotation instant (s3.createdAt).
        const s3 = makeSecret({ createdAt: at(2 * MINUTE), expiresAt: at(365 * 24 * HOUR) });
        expect(await store.addSecret(identity.id, s3, at(2 * HOUR))).toBe(true);
        secrets = (await store.getIdentity(identity.id))?.secrets;
        expect(secrets).toEqual([s3, { ...s2, expiresAt: at(2 * HOUR) }, { ...s1, expiresAt: at(2 * MINUTE) }]);

        // Overlap 0 (compromise): everything else ends now; an earlier end is never extended.
        const s4 = makeSecret({ createdAt: at(3 * MINUTE) });
        expect(await store.addSecret(identity.id, s4, at(3 * MINUTE))).toBe(true);
        secrets = (await store.getIdentity(identity.id))?.secrets;
        expect(secrets?.map((s) => [s.digest, s.expiresAt])).toEqual([
          [s4.digest, null],
          [s3.digest, at(3 * MINUTE)],
          [s2.digest, at(3 * MINUTE)],
          [s1.digest, at(2 * MINUTE)],
        ]);
        expect((await store.findByDigest(s4.digest))?.secret).toEqual(s4);
        expect(mostLiveAtOnce(secrets ?? [])).toBe(2);
      });

      it('rotating twice within the overlap leaves exactly two live secrets: the newest and the one it replaced', async () => {
        const { identity, secret: original } = await issue();
        const first = makeSecret({ createdAt: at(MINUTE) });
        expect(await store.addSecret(identity.id, first, at(MINUTE + HOUR))).toBe(true);
        expect(liveAt((await store.getIdentity(identity.id))?.secrets ?? [], at(2 * MINUTE)).map((s) => s.digest)).toEqual([
          first.digest,
          original.digest,
        ]);

        const second = makeSecret({ createdAt: at(2 * MINUTE) });
        expect(await store.addSecret(identity.id, second, at(2 * MINUTE + HOUR))).toBe(true);
        const secrets = (await store.getIdentity(identity.id))?.secrets ?? [];
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
        expect((await store.findByDigest(original.digest))?.secret.expiresAt).toEqual(at(2 * MINUTE));
      });

      it('never lengthens a secret: the current one keeps an earlier own end, an ended one keeps its end', async () => {
        const { identity, secret: s1 } = await issue({}, { expiresAt: at(10 * MINUTE) });
        const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(20 * MINUTE) });
        expect(await store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
        expect((await store.getIdentity(identity.id))?.secrets).toEqual([s2, s1]); // both ends already earlier

        const s3 = makeSecret({ createdAt: at(15 * MINUTE) }); // s1 ended at 10 min on its own
        expect(await store.addSecret(identity.id, s3, at(HOUR))).toBe(true);
        expect((await store.getIdentity(identity.id))?.secrets).toEqual([s3, s2, s1]);
      });

      it('gives the overlap to the newest secret still live, not to a newer one that already ended', async () => {
        const { identity, secret: s1 } = await issue();
        const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(5 * MINUTE) });
        expect(await store.addSecret(identity.id, s2, at(HOUR))).toBe(true); // s1 → 1 h
        const s3 = makeSecret({ createdAt: at(10 * MINUTE) }); // s2 has ended, s1 still verifies
        expect(await store.addSecret(identity.id, s3, at(30 * MINUTE))).toBe(true);
        const secrets = (await store.getIdentity(identity.id))?.secrets ?? [];
        expect(secrets).toEqual([s3, s2, { ...s1, expiresAt: at(30 * MINUTE) }]);
        expect(mostLiveAtOnce(secrets)).toBe(2);
      });

      it('takes the current secret by creation time, then insertion order, like getIdentity', async () => {
        const { identity, secret: s1 } = await issue();
        const s2 = makeSecret(); // same instant as s1: inserted later, so newer
        expect(await store.addSecret(identity.id, s2, at(HOUR))).toBe(true);
        const s3 = makeSecret();
        expect(await store.addSecret(identity.id, s3, at(2 * HOUR))).toBe(true);
        expect((await store.getIdentity(identity.id))?.secrets).toEqual([
          s3,
          { ...s2, expiresAt: at(2 * HOUR) },
          { ...s1, expiresAt: at(0) },
        ]);
      });

      it('does not touch the secrets of other identities', async () => {
        const a = await issue();
        const b = await issue();
        await store.addSecret(a.identity.id, makeSecret(), at(MINUTE));
        expect((await store.findByDigest(b.secret.digest))?.secret.expiresAt).toBeNull();
      });

      it('resolves false for an unknown identity and stores nothing', async () => {
        const fresh = makeSecret();
        expect(await store.addSecret('key_unknown', fresh, at(HOUR))).toBe(false);
        expect(await store.findByDigest(fresh.digest)).toBeUndefined();
      });

      it('resolves false for a revoked identity and changes nothing', async () => {
        const { identity, secret } = await issue();
        await store.revoke(identity.id, at(HOUR));
        const fresh = makeSecret();
        expect(await store.addSecret(identity.id, fresh, at(MINUTE))).toBe(false);
        expect(await store.findByDigest(fresh.digest)).toBeUndefined();
        expect((await store.findByDigest(secret.digest))?.secret.expiresAt).toEqual(at(HOUR));
      });

      it('is atomic: a duplicate digest rejects and leaves the old secrets as they were', async () => {
        const a = await issue();
        const b = await issue();
        await expect(store.addSecret(a.identity.id, makeSecret({ digest: b.secret.digest }), at(MINUTE))).rejects.toThrow();
        expect((await store.getIdentity(a.identity.id))?.secrets).toEqual([a.secret]);
        expect((await store.findByDigest(b.secret.digest))?.identity.id).toBe(b.identity.id);
      });
    });

    describe('revoke', () => {
      it('sets revokedAt and ends every secret at once, never extending one', async () => {
        const { identity, secret: s1 } = await issue();
        const s2 = makeSecret({ createdAt: at(MINUTE), expiresAt: at(10 * HOUR) });
        await store.addSecret(identity.id, s2, at(30 * MINUTE)); // s1 now ends at +30 min
        const s3 = makeSecret({ createdAt: at(2 * MINUTE) });
        await store.addSecret(identity.id, s3, at(HOUR)); // s2 ends at +1 h, s1 at +2 min
        expect(await store.revoke(identity.id, at(45 * MINUTE))).toBe(true);
        const key = await store.getIdentity(identity.id);
        expect(key?.identity.revokedAt).toEqual(at(45 * MINUTE));
        expect(key?.secrets.map((s) => [s.digest, s.expiresAt])).toEqual([
          [s3.digest, at(45 * MINUTE)],
          [s2.digest, at(45 * MINUTE)],
          [s1.digest, at(2 * MINUTE)],
        ]);
      });

      it('keeps the first revocation time when revoked again', async () => {
        const { identity } = await issue();
        expect(await store.revoke(identity.id, at(HOUR))).toBe(true);
        expect(await store.revoke(identity.id, at(2 * HOUR))).toBe(true);
        expect((await store.getIdentity(identity.id))?.identity.revokedAt).toEqual(at(HOUR));
      });

      it('resolves false for an unknown identity and touches no other', async () => {
        const other = await issue();
        expect(await store.revoke('key_unknown', at(HOUR))).toBe(false);
        expect(await store.getIdentity(other.identity.id)).toEqual({ identity: other.identity, secrets: [other.secret] });
      });
    });

    describe('listIdentities', () => {
      // 23 identities, created in bursts of 4 at the same millisecond: ids break the ties.
      async function seed(): Promise<StoredIdentity[]> {
        const identities: StoredIdentity[] = [];
        for (let n = 0; n < 23; n += 1) {
          const { identity } = await issue(
            { id: `key_${Math.random().toString(36).slice(2, 10)}`, createdAt: at(Math.floor(n / 4) * MINUTE) },
            { createdAt: at(Math.floor(n / 4) * MINUTE) },
          );
          identities.push(identity);
        }
        return identities.sort(byNewest);
      }

      it('resolves no keys when there are none', async () => {
        expect(await store.listIdentities({ take: 10 })).toEqual({ keys: [] });
        expect(await store.listIdentities({ take: 10, offset: 0, withTotal: true })).toEqual({ keys: [], total: 0 });
      });

      it('orders newest first, ties broken by id descending, with secrets', async () => {
        const expected = await seed();
        const { keys, total } = await store.listIdentities({ take: 100 });
        expect(total).toBeUndefined();
        expect(keys.map((k) => k.identity)).toEqual(expected);
        expect(keys.every((k) => k.secrets.length === 1)).toBe(true);
      });

      it.each([1, 3, 4, 5, 22, 23, 24])('walking pages of %i with `after` yields every identity exactly once', async (size) => {
        const expected = await seed();
        const seen = await walkCursor(store, size);
        expect(seen.map((k) => k.identity.id)).toEqual(expected.map((i) => i.id));
      });

      it('honours take exactly and never returns the `after` row', async () => {
        const expected = await seed();
        const pivot = expected[6] as StoredIdentity; // shares its createdAt with neighbours
        const { keys } = await store.listIdentities({ take: 5, after: { createdAt: pivot.createdAt, id: pivot.id } });
        expect(keys.map((k) => k.identity.id)).toEqual(expected.slice(7, 12).map((i) => i.id));
      });

      it('lists backward (oldest first, newer than `after`) for pages reached through a prevCursor', async () => {
        const expected = await seed();
        const pivot = expected[12] as StoredIdentity;
        const { keys } = await store.listIdentities({ take: 5, after: { createdAt: pivot.createdAt, id: pivot.id }, direction: 'backward' });
        expect(keys.map((k) => k.identity.id)).toEqual(expected.slice(7, 12).reverse().map((i) => i.id));
        // Without `after`: from the end, i.e. the oldest identities first.
        const { keys: oldest } = await store.listIdentities({ take: 3, direction: 'backward' });
        expect(oldest.map((k) => k.identity.id)).toEqual(expected.slice(-3).reverse().map((i) => i.id));
        const { keys: counted, total } = await store.listIdentities({ take: 2, direction: 'backward', withTotal: true });
        expect(counted.map((k) => k.identity.id)).toEqual(expected.slice(-2).reverse().map((i) => i.id));
        expect(total).toBe(23);
      });

      it('pages by offset with the total', async () => {
        const expected = await seed();
        const seen: string[] = [];
        for (let offset = 0; offset < expected.length; offset += 5) {
          const { keys, total } = await store.listIdentities({ take: 6, offset, withTotal: true });
          expect(total).toBe(23);
          seen.push(...keys.slice(0, 5).map((k) => k.identity.id));
        }
        expect(seen).toEqual(expected.map((i) => i.id));
      });

      it('counts every identity even past the end, and only when asked', async () => {
        await seed();
        expect(await store.listIdentities({ take: 6, offset: 100, withTotal: true })).toEqual({ keys: [], total: 23 });
        expect((await store.listIdentities({ take: 6, offset: 20 })).total).toBeUndefined();
        expect((await store.listIdentities({ take: 6, offset: 20, withTotal: true })).keys).toHaveLength(3);
      });

      it('includes revoked identities (listing is an admin view)', async () => {
        const { identity } = await issue();
        await store.revoke(identity.id, at(HOUR));
        const { keys } = await store.listIdentities({ take: 10 });
        expect(keys[0]?.identity.revokedAt).toEqual(at(HOUR));
      });
    });

    describe('touchLastUsed', () => {
      it('records the time and never moves it backwards (GREATEST)', async () => {
        const { secret } = await issue();
        const lastUsed = async () => (await store.findByDigest(secret.digest))?.secret.lastUsedAt;
        await store.touchLastUsed([{ digest: secret.digest, at: at(HOUR) }]);
        expect(await lastUsed()).toEqual(at(HOUR));
        await store.touchLastUsed([{ digest: secret.digest, at: at(MINUTE) }]);
        expect(await lastUsed()).toEqual(at(HOUR));
        await store.touchLastUsed([{ digest: secret.digest, at: at(2 * HOUR) }]);
        expect(await lastUsed()).toEqual(at(2 * HOUR));
      });

      it('takes the latest time when a batch names a digest twice, and ignores unknown digests', async () => {
        const a = await issue();
        const b = await issue();
        await store.touchLastUsed([
          { digest: a.secret.digest, at: at(3 * HOUR) },
          { digest: randomDigest(), at: at(HOUR) },
          { digest: a.secret.digest, at: at(HOUR) },
          { digest: b.secret.digest, at: at(MINUTE) },
        ]);
        expect((await store.findByDigest(a.secret.digest))?.secret.lastUsedAt).toEqual(at(3 * HOUR));
        expect((await store.findByDigest(b.secret.digest))?.secret.lastUsedAt).toEqual(at(MINUTE));
      });

      it('touches only the named secret, not its siblings', async () => {
        const { identity, secret } = await issue();
        const newer = makeSecret();
        await store.addSecret(identity.id, newer, at(HOUR));
        await store.touchLastUsed([{ digest: newer.digest, at: at(MINUTE) }]);
        expect((await store.findByDigest(secret.digest))?.secret.lastUsedAt).toBeNull();
      });

      it('accepts an empty batch without a round trip', async () => {
        const before = subject.roundTrips?.();
        await store.touchLastUsed([]);
        expect(subject.roundTrips?.()).toBe(before);
      });

      it('writes a batch of 1000 updates in one round trip', async () => {
        const keys: StoredSecret[] = [];
        for (let n = 0; n < 1000; n += 50) {
          const chunk = Array.from({ length: 50 }, () => ({ identity: makeIdentity(), secret: makeSecret() }));
          await Promise.all(chunk.map(({ identity, secret }) => store.insertIdentity(identity, secret)));
          keys.push(...chunk.map((k) => k.secret));
        }
        const before = subject.roundTrips?.();
        await store.touchLastUsed(keys.map((s, n) => ({ digest: s.digest, at: at(n) })));
        if (before !== undefined) expect(subject.roundTrips?.()).toBe(before + 1);
        const { keys: listed } = await store.listIdentities({ take: 1001 });
        const lastUsed = new Map(listed.map((k) => [k.secrets[0]?.digest, k.secrets[0]?.lastUsedAt?.getTime()]));
        expect(keys.every((s, n) => lastUsed.get(s.digest) === T0 + n)).toBe(true);
      });
    });

    describe('timestamps', () => {
      it('round-trip exactly to the millisecond, far in the past and the future', async () => {
        const times = [new Date(-1), new Date(1), new Date('1999-12-31T23:59:59.999Z'), new Date('2999-01-01T00:00:00.001Z')];
        for (const time of times) {
          const { identity, secret } = await issue(
            { createdAt: time, expiresAt: time },
            { createdAt: time, expiresAt: time, lastUsedAt: time },
          );
          expect(await store.findByDigest(secret.digest)).toEqual({ identity, secret });
        }
      });
    });

    it('answers every method in one round trip', async () => {
      if (subject.roundTrips === undefined) return;
      const count = subject.roundTrips;
      const { identity, secret } = await issue();
      const calls: (() => Promise<unknown>)[] = [
        () => store.insertIdentity(makeIdentity(), makeSecret()),
        () => store.addSecret(identity.id, makeSecret(), at(HOUR)),
        () => store.findByDigest(secret.digest),
        () => store.getIdentity(identity.id),
        () => store.listIdentities({ take: 3, after: { createdAt: at(HOUR), id: 'key_z' } }),
        () => store.listIdentities({ take: 3, offset: 1, withTotal: true }),
        () => store.touchLastUsed([{ digest: secret.digest, at: at(1) }]),
        () => store.recordLeak!(identity.id, at(2), 'https://github.com/o/r'),
        () => store.revoke(identity.id, at(HOUR)),
      ];
      for (const call of calls) {
        const before = count();
        await call();
        expect(count() - before).toBe(1);
      }
    });
  });
}
