/**
 * The behaviour every audit log must have, with the key store that writes it, as a
 * reusable vitest suite: the memory store (core), PGlite and a real PostgreSQL server are
 * held to the same assertions. Not a test file itself.
 * @module
 */
import type { AuditEntry, AuditStore, KeyStore } from '@keyset/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { makeIdentity, makeSecret, randomDigest } from './key-store-fixtures.test-support.ts';

/** A key store over EMPTY tables and the audit log it writes, per test. */
export interface AuditSubject {
  store: KeyStore;
  audit: AuditStore;
}

const T0 = Date.parse('2025-03-04T05:06:07.891Z');
const at = (ms: number): Date => new Date(T0 + ms);

/** An entry with a random id, overridable member by member. */
export function makeEntry(overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `aud_${randomDigest().slice(0, 22)}`,
    at: at(0),
    actor: 'alice',
    action: 'key.updated',
    target: { type: 'key', id: 'key_x' },
    changes: { name: { before: 'a', after: 'b' } },
    requestId: 'req_1',
    ...overrides,
  };
}

export function describeAuditStoreContract(name: string, subject: () => Promise<AuditSubject>): void {
  describe(`audit log contract: ${name}`, () => {
    let store: KeyStore;
    let audit: AuditStore;
    beforeEach(async () => {
      ({ store, audit } = await subject());
    });

    const all = async (): Promise<AuditEntry[]> => (await audit.list({ take: 1000 })).entries;

    it('writes the entry a change carries, as given, and lists it back equal', async () => {
      const identity = makeIdentity();
      const entry = makeEntry({
        target: { type: 'key', id: identity.id },
        action: 'key.issued',
        changes: { name: { before: null, after: identity.name }, metadata: { before: null, after: { z: 1, a: [1, 'two', null] } } },
      });
      await store.insertIdentity(identity, makeSecret(), entry);
      expect(await all()).toEqual([entry]);
      // Member order of `changes` survives (json, not jsonb).
      expect(JSON.stringify((await all())[0]?.changes)).toBe(JSON.stringify(entry.changes));
    });

    it('writes one entry with every kind of change, and none when the change does not apply', async () => {
      const identity = makeIdentity();
      await store.insertIdentity(identity, makeSecret());
      const owner = { id: 'cus_1', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
      const written: AuditEntry[] = [];
      const entry = (action: AuditEntry['action'], type: 'key' | 'owner' = 'key'): AuditEntry => {
        const e = makeEntry({ action, at: at(written.length + 1), target: { type, id: type === 'key' ? identity.id : owner.id } });
        written.push(e);
        return e;
      };
      expect(await store.updateIdentity!(identity.id, { metadata: { a: 1 } }, entry('key.updated'))).toBeDefined();
      expect(await store.updateLimits!(identity.id, { quota: null }, entry('key.limits_updated'))).toBe(true);
      expect(await store.recordLeak!(identity.id, at(3), 'https://example.com/x', entry('key.leaked'))).toBe(true);
      expect(await store.addSecret(identity.id, makeSecret({ createdAt: at(4) }), at(5), entry('key.rotated'))).toBe(true);
      expect(await store.revoke(identity.id, at(6), entry('key.revoked'))).toBe(true);
      expect(await store.insertOwner!(owner, entry('owner.created', 'owner'))).toBe(true);
      expect(await store.updateOwner!(owner.id, { disabledAt: at(7) }, entry('owner.disabled', 'owner'))).toBeDefined();
      expect(await store.deleteOwner!(owner.id, at(8), entry('owner.deleted', 'owner'))).toBe(true);
      expect(await all()).toEqual([...written].reverse());

      // Unknown targets, a taken owner id, a revoked key's rotation: no change, no entry.
      const unknown = 'key_unknown000000000000';
      expect(await store.updateIdentity!(unknown, { metadata: {} }, makeEntry())).toBeUndefined();
      expect(await store.updateLimits!(unknown, { quota: null }, makeEntry())).toBe(false);
      expect(await store.recordLeak!(unknown, at(9), null, makeEntry())).toBe(false);
      expect(await store.revoke(unknown, at(9), makeEntry())).toBe(false);
      expect(await store.addSecret(identity.id, makeSecret(), at(9), makeEntry())).toBe(false);
      expect(await store.updateOwner!('nobody', { metadata: {} }, makeEntry())).toBeUndefined();
      expect(await store.deleteOwner!('nobody', at(9), makeEntry())).toBe(false);
      await store.insertOwner!({ ...owner, id: 'cus_2' });
      expect(await store.insertOwner!({ ...owner, id: 'cus_2' }, makeEntry())).toBe(false);
      expect(await all()).toHaveLength(written.length);
    });

    it('changes nothing when the entry cannot be written (its id is taken), and writes no entry when the change fails', async () => {
      const taken = makeEntry();
      await audit.append(taken);
      const identity = makeIdentity();
      await store.insertIdentity(identity, makeSecret());
      const clash = makeEntry({ id: taken.id, action: 'key.revoked', target: { type: 'key', id: identity.id } });
      await expect(store.revoke(identity.id, at(1), clash)).rejects.toThrow();
      expect((await store.getIdentity(identity.id))?.identity.revokedAt).toBeNull();
      await expect(store.updateIdentity!(identity.id, { metadata: { b: 2 } }, clash)).rejects.toThrow();
      expect((await store.getIdentity(identity.id))?.identity.metadata).toEqual({});
      const other = makeIdentity();
      await expect(store.insertIdentity(other, makeSecret(), clash)).rejects.toThrow();
      expect(await store.getIdentity(other.id)).toBeUndefined();
      await expect(store.insertOwner!({ id: 'cus_9', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null }, clash)).rejects.toThrow();
      expect(await store.getOwner!('cus_9')).toBeUndefined();
      await expect(store.updateLimits!(identity.id, { quota: { remaining: 5, refill: null, setAt: at(1) } }, clash)).rejects.toThrow();
      await expect(store.recordLeak!(identity.id, at(1), null, clash)).rejects.toThrow();
      await expect(store.addSecret(identity.id, makeSecret({ createdAt: at(1) }), at(1), clash)).rejects.toThrow();
      const key = await store.getIdentity(identity.id);
      expect(key?.identity).toMatchObject({ quota: null, revokedAt: null });
      expect(key?.identity.leakedAt ?? null).toBeNull();
      expect(key?.secrets).toHaveLength(1);
      const owner = { id: 'cus_8', metadata: {}, rateLimits: null, quota: null, createdAt: at(0), disabledAt: null };
      await store.insertOwner!(owner);
      await store.insertIdentity(makeIdentity({ ownerId: owner.id }), makeSecret());
      await expect(store.updateOwner!(owner.id, { disabledAt: at(2) }, clash)).rejects.toThrow();
      await expect(store.deleteOwner!(owner.id, at(2), clash)).rejects.toThrow();
      // A store given no incarnation makes one.
      expect(await store.getOwner!(owner.id)).toEqual({ ...owner, incarnation: expect.any(String) });
      expect((await store.listIdentities({ take: 10, ownerId: owner.id })).keys.map((k) => k.identity.revokedAt)).toEqual([null]);

      // The other way round: a change that fails (a digest already stored) leaves no entry.
      await expect(store.insertIdentity(makeIdentity(), makeSecret({ digest: (await store.getIdentity(identity.id))!.secrets[0]!.digest }), makeEntry())).rejects.toThrow();
      expect(await all()).toEqual([taken]);
    });

    it('is append-only: an entry with a taken id is refused and the first one stays whole', async () => {
      const first = makeEntry({ actor: 'first' });
      await audit.append(first);
      await expect(audit.append({ ...first, actor: 'second' })).rejects.toThrow();
      expect(await all()).toEqual([first]);
      // Nothing to edit or remove one entry with: appending, listing and pruning by age only.
      expect(Object.keys(audit).filter((name) => /update|delete|remove|edit|replace|set/i.test(name))).toEqual([]);
    });

    it('filters by target, actor, action and time (from inclusive, to exclusive)', async () => {
      const a = makeEntry({ at: at(10), actor: 'alice', action: 'key.issued', target: { type: 'key', id: 'key_a' } });
      const b = makeEntry({ at: at(20), actor: 'bob', action: 'key.revoked', target: { type: 'key', id: 'key_a' } });
      const c = makeEntry({ at: at(30), actor: 'alice', action: 'owner.created', target: { type: 'owner', id: 'cus_1' } });
      for (const e of [b, c, a]) await audit.append(e);
      const ids = async (q: Omit<Parameters<AuditStore['list']>[0], 'take'>): Promise<string[]> => (await audit.list({ take: 100, ...q })).entries.map((e) => e.id);
      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({ target: 'key_a' })).toEqual([b.id, a.id]);
      expect(await ids({ actor: 'alice' })).toEqual([c.id, a.id]);
      expect(await ids({ action: 'key.revoked' })).toEqual([b.id]);
      expect(await ids({ from: at(20) })).toEqual([c.id, b.id]);
      expect(await ids({ to: at(20) })).toEqual([a.id]);
      expect(await ids({ from: at(10), to: at(30), actor: 'alice' })).toEqual([a.id]);
      expect(await ids({ target: 'nobody' })).toEqual([]);
    });

    it('pages newest first with ties on `at` broken by id, both directions, and offset with a total', async () => {
      const entries = Array.from({ length: 9 }, (_, n) => makeEntry({ at: at(Math.floor(n / 3)), actor: n % 2 === 0 ? 'even' : 'odd' }));
      for (const e of entries) await audit.append(e);
      const expected = [...entries].sort((x, y) => y.at.getTime() - x.at.getTime() || (x.id < y.id ? 1 : -1)).map((e) => e.id);
      const seen: string[] = [];
      let after: { at: Date; id: string } | undefined;
      for (;;) {
        const { entries: page } = await audit.list(after === undefined ? { take: 2 } : { take: 2, after });
        seen.push(...page.map((e) => e.id));
        if (page.length < 2) break;
        const last = page.at(-1)!;
        after = { at: last.at, id: last.id };
      }
      expect(seen).toEqual(expected);
      const back = await audit.list({ take: 3, direction: 'backward', after: { at: entries[4]!.at, id: expected[4]! } });
      expect(back.entries.map((e) => e.id)).toEqual(expected.slice(0, 4).reverse().slice(0, 3));
      const offset = await audit.list({ take: 2, offset: 7, withTotal: true, actor: 'even' });
      expect(offset.total).toBe(5);
      expect(offset.entries).toEqual([]);
      const second = await audit.list({ take: 2, offset: 2, withTotal: true, actor: 'even' });
      expect(second).toEqual({ entries: expect.any(Array), total: 5 });
      expect(second.entries.map((e) => e.id)).toEqual(expected.filter((id) => entries.find((e) => e.id === id)!.actor === 'even').slice(2, 4));
    });

    it('prunes the entries older than a date, and only those', async () => {
      const old = [makeEntry({ at: at(-2000) }), makeEntry({ at: at(-1000) })];
      const kept = [makeEntry({ at: at(0) }), makeEntry({ at: at(1000) })];
      for (const e of [...kept, ...old]) await audit.append(e);
      expect(await audit.prune(at(0))).toBe(2);
      expect((await all()).map((e) => e.id)).toEqual([kept[1]!.id, kept[0]!.id]);
      expect(await audit.prune(at(0))).toBe(0);
    });
  });
}
