/**
 * Roles through the keyring's own path: a key holds its scopes, its roles' permissions and
 * its owner's roles' permissions; a role change reaches a cached key before the call
 * resolves, here and (through the change listeners a revocation bus subscribes) on another
 * keyring over the same store; every change is audited.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryAuditStore } from '../audit/memory-audit-store.ts';
import { KeysetError } from '../errors.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createKeyring, type Keyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createOwnerAdmin } from './owner-admin.ts';
import { createRoleAdmin } from './role-admin.ts';

const PREFIX = 'acme_test';

function setup() {
  const audit = createMemoryAuditStore();
  const store = createMemoryKeyStore({ audit });
  // A clock that moves on each reading, so audit entries list in the order they were made.
  let now = Date.UTC(2026, 0, 1);
  const clock = (): number => now++;
  // A long cache TTL: only an eviction can make a cached key see a role change.
  const keyring = createKeyring({ store, prefix: PREFIX, clock, lastUsed: false, cache: { ttlMs: 3_600_000 } });
  // A second instance over the same store, told of changes as a revocation bus would tell it.
  const other = createKeyring({ store, prefix: PREFIX, lastUsed: false, cache: { ttlMs: 3_600_000 } });
  keyring.onChange((event) => other.invalidate(event.id));
  return { audit, store, keyring, other, keys: createKeyAdmin(keyring), owners: createOwnerAdmin(keyring), roles: createRoleAdmin(keyring, { actor: 'tester' }) };
}

const code = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof KeysetError ? error.code : String(error)),
  );

/** The 403's `missing_scopes` for `key` on a route needing `scopes`, or `[]` when admitted. */
async function missing(keyring: Keyring, key: string, scopes: readonly string[]): Promise<unknown> {
  try {
    await keyring.authenticate({ authorization: `ApiKey ${key}` }, { scopes });
    return [];
  } catch (error) {
    if (error instanceof KeysetError && error.code === 'insufficient_scope') return error.extensions?.missing_scopes;
    throw error;
  }
}

describe('roles', () => {
  it("a key holds its own scopes, its roles' permissions and its owner's roles' permissions", async () => {
    const { keyring, keys, owners, roles } = setup();
    await roles.create({ name: 'reader', permissions: ['orders:read'] });
    await roles.create({ name: 'analyst', permissions: ['reports:read', 'orders:read'], description: 'dashboards' });
    await owners.create({ id: 'cus_1' });
    const { key, record } = await keys.issue({ name: 'ci', scopes: ['billing:read'], ownerId: 'cus_1' });
    expect(await missing(keyring, key, ['orders:read', 'reports:read', 'billing:read'])).toEqual(['orders:read', 'reports:read']);
    await roles.setKeyRoles(record.id, ['reader']);
    expect(await missing(keyring, key, ['orders:read', 'reports:read', 'billing:read'])).toEqual(['reports:read']);
    const held = await roles.setOwnerRoles('cus_1', ['analyst']);
    expect(held).toEqual({ id: 'cus_1', roles: ['analyst'], inheritedRoles: [], permissions: ['reports:read', 'orders:read'] });
    expect(await missing(keyring, key, ['orders:read', 'reports:read', 'billing:read'])).toEqual([]);
    expect((await keyring.verify(key)).scopes).toEqual(['billing:read', 'orders:read', 'reports:read']);
    expect(await roles.keyRoles(record.id)).toEqual({ id: record.id, roles: ['reader'], inheritedRoles: ['analyst'], permissions: ['billing:read', 'orders:read', 'reports:read'] });
  });

  it('a change to a role, or to who holds it, reaches cached keys on both instances before the call resolves', async () => {
    const { keyring, other, keys, owners, roles } = setup();
    await roles.create({ name: 'reader', permissions: ['orders:read'] });
    await owners.create({ id: 'cus_1' });
    const direct = await keys.issue({ name: 'direct', scopes: [] });
    const owned = await keys.issue({ name: 'owned', scopes: [], ownerId: 'cus_1' });
    for (const ring of [keyring, other]) {
      expect(await missing(ring, direct.key, ['orders:read'])).toEqual(['orders:read']);
      expect(await missing(ring, owned.key, ['orders:read'])).toEqual(['orders:read']);
    }
    await roles.setKeyRoles(direct.record.id, ['reader']);
    await roles.setOwnerRoles('cus_1', ['reader']);
    for (const ring of [keyring, other]) {
      expect(await missing(ring, direct.key, ['orders:read'])).toEqual([]);
      expect(await missing(ring, owned.key, ['orders:read'])).toEqual([]);
    }
    await roles.update('reader', { permissions: ['reports:read'] });
    for (const ring of [keyring, other]) {
      expect(await missing(ring, direct.key, ['orders:read'])).toEqual(['orders:read']);
      expect(await missing(ring, owned.key, ['reports:read'])).toEqual([]);
    }
    await roles.delete('reader');
    for (const ring of [keyring, other]) {
      expect(await missing(ring, direct.key, ['reports:read'])).toEqual(['reports:read']);
      expect(await missing(ring, owned.key, ['reports:read'])).toEqual(['reports:read']);
    }
    // A role created again under the name is not held by those who held the deleted one.
    await roles.create({ name: 'reader', permissions: ['reports:read'] });
    expect(await missing(other, direct.key, ['reports:read'])).toEqual(['reports:read']);
    expect((await roles.keyRoles(direct.record.id)).roles).toEqual([]);
  });

  it("an owner created again under a deleted id holds none of the deleted owner's roles", async () => {
    const { owners, roles } = setup();
    await roles.create({ name: 'reader', permissions: ['orders:read'] });
    await owners.create({ id: 'cus_1' });
    await roles.setOwnerRoles('cus_1', ['reader']);
    await owners.delete('cus_1');
    await owners.create({ id: 'cus_1' });
    expect((await roles.ownerRoles('cus_1')).roles).toEqual([]);
  });

  it('refuses bad input with invalid_request or not_found, changing nothing', async () => {
    const { keys, roles } = setup();
    const { record } = await keys.issue({ name: 'k', scopes: [] });
    await roles.create({ name: 'reader', permissions: ['orders:read'] });
    expect(await code(roles.create({ name: 'reader', permissions: [] }))).toBe('invalid_request');
    expect(await code(roles.create({ name: 'a b', permissions: [] }))).toBe('invalid_request');
    expect(await code(roles.create({ name: 'x', permissions: ['orders read'] }))).toBe('invalid_request');
    expect(await code(roles.create({ name: 'x', permissions: 'orders:read' as never }))).toBe('invalid_request');
    expect(await code(roles.setKeyRoles(record.id, ['reader', 'nobody']))).toBe('invalid_request');
    expect((await roles.keyRoles(record.id)).roles).toEqual([]);
    expect(await code(roles.setKeyRoles('key_missing', ['reader']))).toBe('not_found');
    expect(await code(roles.setKeyRoles('key_0000000000000000000000', ['reader']))).toBe('not_found');
    expect(await code(roles.keyRoles('key_\u0000'))).toBe('not_found');
    expect(await code(roles.ownerRoles('a{b}'))).toBe('not_found');
    expect(await code(roles.setOwnerRoles('nobody', ['reader']))).toBe('not_found');
    expect(await code(roles.update('nobody', { permissions: [] }))).toBe('not_found');
    expect(await code(roles.update('reader', {}))).toBe('invalid_request');
    expect(await code(roles.delete('nobody'))).toBe('not_found');
    expect(await code(roles.get('a{b}'))).toBe('not_found');
    expect((await roles.list()).map((r) => r.name)).toEqual(['reader']);
  });

  it('audits every change with its actor, target and fields', async () => {
    const { audit, keys, owners, roles } = setup();
    const { record } = await keys.issue({ name: 'k', scopes: [] });
    await owners.create({ id: 'cus_1' });
    await roles.create({ name: 'reader', permissions: ['orders:read'] });
    await roles.update('reader', { permissions: ['orders:read', 'reports:read'] }, { actor: 'key_admin1', requestId: 'req-1' });
    await roles.setKeyRoles(record.id, ['reader']);
    await roles.setOwnerRoles('cus_1', ['reader']);
    await roles.delete('reader');
    const entries = (await audit.list({ take: 100 })).entries.filter((e) => e.action.startsWith('role.') || e.action.endsWith('roles_set')).reverse();
    expect(entries.map((e) => [e.action, e.target.type, e.target.id, e.actor])).toEqual([
      ['role.created', 'role', 'reader', 'tester'],
      ['role.updated', 'role', 'reader', 'key_admin1'],
      ['key.roles_set', 'key', record.id, 'tester'],
      ['owner.roles_set', 'owner', 'cus_1', 'tester'],
      ['role.deleted', 'role', 'reader', 'tester'],
    ]);
    expect(entries[1]!.changes).toEqual({ permissions: { before: ['orders:read'], after: ['orders:read', 'reports:read'] } });
    expect(entries[1]!.requestId).toBe('req-1');
    expect(entries[2]!.changes).toEqual({ roles: { before: [], after: ['reader'] } });
  });

  it('with scopeWildcards, a role granting `orders:*` covers `orders:read` in a list and in a query; without, it does not', async () => {
    for (const scopeWildcards of [true, false]) {
      const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: PREFIX, scopeWildcards, lastUsed: false });
      const roles = createRoleAdmin(keyring);
      await roles.create({ name: 'orders-all', permissions: ['orders:*'] });
      const { key, record } = await createKeyAdmin(keyring).issue({ name: 'w', scopes: [] });
      await roles.setKeyRoles(record.id, ['orders-all']);
      expect(await missing(keyring, key, ['orders:read'])).toEqual(scopeWildcards ? [] : ['orders:read']);
      const query = await keyring.authenticate({ authorization: `ApiKey ${key}` }, { permissions: { or: ['reports:read', 'orders:write'] } }).then(
        () => 'admitted',
        (error: KeysetError) => error.extensions?.missing_scopes,
      );
      expect(query).toEqual(scopeWildcards ? 'admitted' : ['reports:read']);
    }
  });

  it('needs a store that keeps roles', () => {
    const { insertRole: _dropped, ...withoutRoles } = createMemoryKeyStore();
    const keyring = createKeyring({ store: withoutRoles, prefix: PREFIX });
    expect(() => createRoleAdmin(keyring)).toThrow(/keeps no roles/);
  });
});
