/**
 * Roles: permissions (scopes) the application bundles under a name, held by keys and by
 * owners, as `createRoleAdmin(keyring)`. A key holds its own scopes, the permissions of its
 * roles and those of its owner's roles; routes check them all alike (`scopes`,
 * `permissions`). Every change is audited, and reaches the keyring's cached keys on every
 * instance before the call resolves: a role's change evicts `role:<name>` (every key
 * holding it, itself or through its owner), a key's roles its id, an owner's `owner:<id>`,
 * all carried by the change listeners (a revocation bus) with a revocation's acknowledgement.
 * @module
 */
import { auditEntry, changesBetween, resolveAuditContext, type AuditContext, type ResolvedAuditContext } from '../audit/audit-entry.ts';
import type { AuditAction, AuditChange, AuditEntry } from '../audit/audit-store.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { randomBase62 } from '../internal/base62.ts';
import { assertKnownOptions } from '../internal/check-options.ts';
import type { JsonValue } from '../keys/key-metadata.ts';
import { storeCall } from '../keys/internal/store-call.ts';
import { ADMIN_OPTIONS, adminActor, type AdminOptions } from './key-admin.ts';
import { validateOwnerId } from './key-input.ts';
import type { KeyStore, RoleTarget, StoredRole } from '../keys/key-store.ts';
import type { Keyring } from '../auth/keyring.ts';
import { OWNER_EVICTION_PREFIX, ROLE_EVICTION_PREFIX } from '../auth/key-verifier.ts';
import { isValidScope } from '../keys/scopes.ts';

/** A role as administrators see it. */
export interface RoleRecord {
  readonly name: string;
  readonly permissions: readonly string[];
  readonly description: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What `RoleAdmin.create` takes. */
export interface CreateRoleInput {
  /** 1-64 of `A-Z a-z 0-9 _ . : -`. */
  name: string;
  /** Scope tokens (at most 256, distinct) every key holding the role holds. */
  permissions: readonly string[];
  /** Free text, at most 500 characters. @default '' */
  description?: string;
}

/** What `RoleAdmin.update` changes; a field left out is kept. */
export interface UpdateRoleInput {
  permissions?: readonly string[];
  description?: string;
}

/** The roles of a key or an owner, and every permission they come to. */
export interface HeldRoles {
  /** The key's or owner's id. */
  readonly id: string;
  /** Its own roles, by name. */
  readonly roles: readonly string[];
  /** For a key, its owner's roles (empty without an owner); for an owner, empty. */
  readonly inheritedRoles: readonly string[];
  /** What it holds in all: a key's own scopes, then its roles' and its owner's roles' permissions, without repeats. */
  readonly permissions: readonly string[];
}

/**
 * Role administration. Rejects with `not_found`, `invalid_request` (bad input, a name
 * taken, an unknown role assigned) or `unavailable`. Every changing method takes an
 * optional last argument `context` (`{ actor?, requestId? }`) for its audit entry.
 */
export interface RoleAdmin {
  create(input: CreateRoleInput, context?: AuditContext): Promise<RoleRecord>;
  get(name: string): Promise<RoleRecord>;
  /** Every role, by name. */
  list(): Promise<RoleRecord[]>;
  /** Every instance drops its cached keys holding the role before it resolves. */
  update(name: string, input: UpdateRoleInput, context?: AuditContext): Promise<RoleRecord>;
  /** Takes the role from every key and owner; every instance drops their cached keys before it resolves. */
  delete(name: string, context?: AuditContext): Promise<void>;
  /** Replaces the roles of key `keyId` (revoked or not). */
  setKeyRoles(keyId: string, roles: readonly string[], context?: AuditContext): Promise<HeldRoles>;
  /** Replaces the roles of owner `ownerId`: every key it owns holds their permissions. */
  setOwnerRoles(ownerId: string, roles: readonly string[], context?: AuditContext): Promise<HeldRoles>;
  keyRoles(keyId: string): Promise<HeldRoles>;
  ownerRoles(ownerId: string): Promise<HeldRoles>;
}

const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
/** The key ids `createKeyAdmin` makes; anything else names no key (and never reaches the store). */
const KEY_ID = /^key_[0-9A-Za-z]{22}$/;
const MAX_PERMISSIONS = 256;
const MAX_ROLES = 64;
const MAX_DESCRIPTION = 500;

type RoleStore = Required<Pick<KeyStore, 'insertRole' | 'getRole' | 'listRoles' | 'updateRole' | 'deleteRole' | 'setRoles' | 'rolesOf'>>;

function invalid(field: string, detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field } });
}

function notFound(what: string): KeysetError {
  return new KeysetError('not_found', { detail: `No ${what}.` });
}

function roleName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !ROLE_NAME.test(value)) throw invalid(field, `\`${field}\` must be 1-64 of A-Z a-z 0-9 _ . : -.`);
  return value;
}

function permissionsOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_PERMISSIONS || !value.every(isValidScope)) {
    throw invalid('permissions', `\`permissions\` must be an array of at most ${MAX_PERMISSIONS} scope tokens such as 'orders:read'.`);
  }
  return [...new Set(value)];
}

function descriptionOf(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_DESCRIPTION) throw invalid('description', `\`description\` must be a string of at most ${MAX_DESCRIPTION} characters.`);
  return value;
}

function roleNames(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_ROLES) throw invalid('roles', `\`roles\` must be an array of at most ${MAX_ROLES} role names.`);
  return [...new Set(value.map((name) => roleName(name, 'roles')))].sort();
}

/** A key or owner id from a route or a caller: `not_found` for anything no key or owner can have. */
function targetOf(type: RoleTarget['type'], id: unknown): RoleTarget {
  if (type === 'key') {
    if (typeof id !== 'string' || !KEY_ID.test(id)) throw notFound('key with this id');
    return { type, id };
  }
  try {
    return { type, id: validateOwnerId(id, 'id') };
  } catch {
    throw notFound('owner with this id');
  }
}

function toRoleRecord(role: StoredRole): RoleRecord {
  const record = {
    name: role.name,
    permissions: Object.freeze([...role.permissions]),
    description: role.description,
    createdAt: new Date(role.createdAt.getTime()),
    updatedAt: new Date(role.updatedAt.getTime()),
  };
  Object.defineProperty(record, 'toJSON', {
    value: () => ({ ...record, permissions: [...record.permissions], createdAt: record.createdAt.toISOString(), updatedAt: record.updatedAt.toISOString() }),
  });
  return Object.freeze(record);
}

function roleFields(role: StoredRole): Record<string, JsonValue> {
  return { permissions: [...role.permissions], description: role.description };
}

/**
 * The role administration of `keyring` (made by `createKeyring`), over its store (which
 * must keep roles: the memory store and `@keyset/postgres` do). Throws `ConfigError` otherwise.
 *
 * @example
 * ```ts
 * const roles = createRoleAdmin(keyring);
 * await roles.create({ name: 'analyst', permissions: ['orders:read', 'reports:read'] });
 * await roles.setOwnerRoles('cus_42', ['analyst']); // every key of cus_42 may read orders and reports
 * await roles.update('analyst', { permissions: ['reports:read'] }); // on every instance, before it resolves
 * ```
 */
export function createRoleAdmin(keyring: Keyring, options: AdminOptions = {}): RoleAdmin {
  if (typeof keyring?.parts !== 'function') throw new ConfigError('createRoleAdmin needs a keyring made by createKeyring');
  assertKnownOptions('createRoleAdmin', options, ADMIN_OPTIONS);
  const defaultActor = adminActor(options.actor);
  const { config, log, verifier, changes } = keyring.parts();
  const { clock, crypto } = config;
  const store = config.store as KeyStore & Partial<RoleStore>;
  for (const method of ['insertRole', 'getRole', 'listRoles', 'updateRole', 'deleteRole', 'setRoles', 'rolesOf'] as const) {
    if (typeof store[method] !== 'function') throw new ConfigError(`This key store keeps no roles (KeyStore.${method} is missing)`);
  }
  const roles = store as KeyStore & RoleStore;

  function entry(who: ResolvedAuditContext, at: number, action: AuditAction, target: AuditEntry['target'], fields: Record<string, AuditChange>): AuditEntry {
    return auditEntry(`aud_${randomBase62((n) => crypto.randomBytes(n), 22)}`, new Date(at), who, action, target, fields);
  }

  /** Drops the cached keys `id` names (a key id, `owner:<id>` or `role:<name>`) here, then on every other instance (acknowledged). */
  async function evict(id: string): Promise<void> {
    verifier.evict(id);
    await changes.emit({ type: 'updated', id });
  }

  async function getRole(name: string): Promise<StoredRole> {
    const role = await storeCall(log, 'getRole', () => roles.getRole(name));
    if (role === undefined) throw notFound('role with this name');
    return role;
  }

  async function rolesOf(target: RoleTarget): Promise<string[]> {
    const held = await storeCall(log, 'rolesOf', () => roles.rolesOf(target));
    if (held === undefined) throw notFound(target.type === 'key' ? 'key with this id' : 'owner with this id');
    return held;
  }

  /** The permissions of `names`, each once, after `own`. */
  async function permissionsOfRoles(own: readonly string[], names: readonly string[]): Promise<string[]> {
    const all = new Set(own);
    if (names.length > 0) {
      const byName = new Map((await storeCall(log, 'listRoles', () => roles.listRoles())).map((role) => [role.name, role.permissions]));
      for (const name of names) for (const permission of byName.get(name) ?? []) all.add(permission);
    }
    return [...all];
  }

  async function held(target: RoleTarget): Promise<HeldRoles> {
    if (target.type === 'owner') {
      const own = await rolesOf(target);
      return Object.freeze({ id: target.id, roles: Object.freeze(own), inheritedRoles: Object.freeze([]), permissions: Object.freeze(await permissionsOfRoles([], own)) });
    }
    const key = await storeCall(log, 'getIdentity', () => roles.getIdentity(target.id));
    if (key === undefined) throw notFound('key with this id');
    const own = await rolesOf(target);
    const ownerId = key.identity.ownerId ?? null;
    const inherited = ownerId === null ? [] : ((await storeCall(log, 'rolesOf', () => roles.rolesOf({ type: 'owner', id: ownerId }))) ?? []);
    const permissions = await permissionsOfRoles(key.identity.scopes, [...own, ...inherited]);
    return Object.freeze({ id: target.id, roles: Object.freeze(own), inheritedRoles: Object.freeze(inherited), permissions: Object.freeze(permissions) });
  }

  async function setRoles(target: RoleTarget, input: unknown, context: AuditContext | undefined): Promise<HeldRoles> {
    const who = resolveAuditContext(context, defaultActor);
    const names = roleNames(input);
    const before = await rolesOf(target);
    const action = target.type === 'key' ? 'key.roles_set' : 'owner.roles_set';
    const audit = entry(who, clock(), action, { type: target.type, id: target.id }, changesBetween({ roles: before }, { roles: names }));
    const outcome = await storeCall(log, 'setRoles', () => roles.setRoles(target, names, audit));
    if (outcome === 'not_found') throw notFound(target.type === 'key' ? 'key with this id' : 'owner with this id');
    if (outcome === 'unknown_role') throw invalid('roles', 'Every name in `roles` must be a role (create it first).');
    await evict(target.type === 'key' ? target.id : OWNER_EVICTION_PREFIX + target.id);
    return held(target);
  }

  return Object.freeze({
    async create(input: CreateRoleInput, context?: AuditContext): Promise<RoleRecord> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `name` and `permissions`.');
      const now = clock();
      const role: StoredRole = {
        name: roleName(input.name, 'name'),
        permissions: permissionsOf(input.permissions),
        description: input.description === undefined ? '' : descriptionOf(input.description),
        createdAt: new Date(now),
        updatedAt: new Date(now),
      };
      const audit = entry(who, now, 'role.created', { type: 'role', id: role.name }, changesBetween(null, roleFields(role)));
      if (!(await storeCall(log, 'insertRole', () => roles.insertRole(role, audit)))) throw invalid('name', 'A role with this name exists already.');
      return toRoleRecord(role);
    },

    async get(name: string): Promise<RoleRecord> {
      if (typeof name !== 'string' || !ROLE_NAME.test(name)) throw notFound('role with this name');
      return toRoleRecord(await getRole(name));
    },

    async list(): Promise<RoleRecord[]> {
      return (await storeCall(log, 'listRoles', () => roles.listRoles())).map(toRoleRecord);
    },

    async update(name: string, input: UpdateRoleInput, context?: AuditContext): Promise<RoleRecord> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof name !== 'string' || !ROLE_NAME.test(name)) throw notFound('role with this name');
      if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `permissions` and/or `description`.');
      const permissions = input.permissions === undefined ? undefined : permissionsOf(input.permissions);
      const description = input.description === undefined ? undefined : descriptionOf(input.description);
      if (permissions === undefined && description === undefined) throw invalid('body', 'Send `permissions` and/or `description` to change.');
      const current = await getRole(name);
      const now = clock();
      const next: StoredRole = { ...current, ...(permissions === undefined ? {} : { permissions }), ...(description === undefined ? {} : { description }), updatedAt: new Date(now) };
      const audit = entry(who, now, 'role.updated', { type: 'role', id: name }, changesBetween(roleFields(current), roleFields(next)));
      const patch = { updatedAt: next.updatedAt, ...(permissions === undefined ? {} : { permissions }), ...(description === undefined ? {} : { description }) };
      const updated = await storeCall(log, 'updateRole', () => roles.updateRole(name, patch, audit));
      if (updated === undefined) throw notFound('role with this name');
      if (permissions !== undefined) await evict(ROLE_EVICTION_PREFIX + name);
      return toRoleRecord(updated);
    },

    async delete(name: string, context?: AuditContext): Promise<void> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof name !== 'string' || !ROLE_NAME.test(name)) throw notFound('role with this name');
      const current = await getRole(name);
      const audit = entry(who, clock(), 'role.deleted', { type: 'role', id: name }, changesBetween(roleFields(current), null));
      if (!(await storeCall(log, 'deleteRole', () => roles.deleteRole(name, audit)))) throw notFound('role with this name');
      await evict(ROLE_EVICTION_PREFIX + name);
    },

    async setKeyRoles(keyId: string, names: readonly string[], context?: AuditContext): Promise<HeldRoles> {
      return setRoles(targetOf('key', keyId), names, context);
    },

    async setOwnerRoles(ownerId: string, names: readonly string[], context?: AuditContext): Promise<HeldRoles> {
      return setRoles(targetOf('owner', ownerId), names, context);
    },

    async keyRoles(keyId: string): Promise<HeldRoles> {
      return held(targetOf('key', keyId));
    },

    async ownerRoles(ownerId: string): Promise<HeldRoles> {
      return held(targetOf('owner', ownerId));
    },
  });
}
