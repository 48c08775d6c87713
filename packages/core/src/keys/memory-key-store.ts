/**
 * `KeyStore` in process memory: for tests, examples and single-process services. It
 * keeps the same semantics as `@keyset/postgres` (newest-first listing with `id` as the
 * tie-breaker, `GREATEST` on last use, atomic rotation that leaves at most two live
 * secrets) and hands out copies, so no caller can change stored state by mutating a
 * returned object.
 * @module
 */
import type { AuditEntry } from '../audit/audit-store.ts';
import type { MemoryAuditStore } from '../audit/memory-audit-store.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { ConfigError } from '../errors.ts';
import { freezeMetadata } from './key-metadata.ts';
import type {
  FoundKey,
  IdentityLimitsPatch,
  KeyStore,
  ListIdentitiesQuery,
  ListOwnersQuery,
  OwnerPatch,
  PepperCount,
  PepperRehash,
  RolePatch,
  RoleTarget,
  StoredIdentity,
  StoredKey,
  StoredOwner,
  StoredRole,
  StoredSecret,
} from './key-store.ts';
import { applyQuotaPatch, modeSwitched } from './quota-patch.ts';
import { rotationEnds } from './rotation-ends.ts';
import { copyDate, copyIdentity, copyKey, copyOwner, copyQuota, copyRole, copySecret, minDate, newestFirst, pageOf } from './internal/memory-copies.ts';


/** Options of `createMemoryKeyStore`. */
export interface MemoryKeyStoreOptions {
  /**
   * The audit log every change appends its entry to (`createMemoryAuditStore()`), in the
   * same synchronous step as the change. Absent: entries are dropped (no log kept).
   */
  audit?: MemoryAuditStore;
}

const MEMORY_KEY_STORE_OPTIONS = { audit: true } as const satisfies KnownOptions<MemoryKeyStoreOptions>;

/**
 * A `KeyStore` held in memory. Data is lost when the process ends.
 *
 * @example
 * ```ts
 * const audit = createMemoryAuditStore();
 * const keyring = createKeyring({ store: createMemoryKeyStore({ audit }), prefix: 'acme_test' });
 * ```
 */
export function createMemoryKeyStore(options: MemoryKeyStoreOptions = {}): KeyStore {
  assertKnownOptions('createMemoryKeyStore', options, MEMORY_KEY_STORE_OPTIONS);
  const { audit: log } = options;
  // A change and its entry in one synchronous step: the memory audit store's `appendWith`
  // (it uses no `this`), or the change alone when no log is kept.
  const appendWith: MemoryAuditStore['appendWith'] = log === undefined ? (_entry, change) => change() : log?.appendWith;
  if (typeof appendWith !== 'function') throw new ConfigError('audit: expected createMemoryAuditStore()');
  const keys = new Map<string, StoredKey>();
  const byDigest = new Map<string, StoredKey>();
  const owners = new Map<string, StoredOwner>();
  // Incarnations for owners inserted without one: unique within this store, which is all they need.
  let incarnations = 0;
  const roles = new Map<string, StoredRole>();
  // Role names by holder: `key:<id>`, or `owner:<incarnation>` (so an owner created again under
  // a deleted id holds none of the deleted one's roles).
  const grants = new Map<string, string[]>();

  function holder(target: RoleTarget): string | undefined {
    if (target.type === 'key') return keys.has(target.id) ? `key:${target.id}` : undefined;
    const owner = owners.get(target.id);
    return owner === undefined ? undefined : `owner:${owner.incarnation}`;
  }

  /** The roles a found key holds: its own, then its owner's. */
  function rolesHeld(identity: StoredIdentity, owner: StoredOwner | null): Pick<StoredRole, 'name' | 'permissions'>[] {
    const names = [...(grants.get(`key:${identity.id}`) ?? []), ...(owner === null ? [] : (grants.get(`owner:${owner.incarnation}`) ?? []))];
    return names.flatMap((name) => {
      const role = roles.get(name);
      return role === undefined ? [] : [{ name, permissions: [...role.permissions] }];
    });
  }

  function found(digest: string): FoundKey | undefined {
    const key = byDigest.get(digest);
    const secret = key?.secrets.find((s) => s.digest === digest);
    if (key === undefined || secret === undefined) return undefined;
    const hit = { identity: copyIdentity(key.identity), secret: copySecret(secret) };
    const ownerId = key.identity.ownerId ?? null;
    const stored = ownerId === null ? undefined : owners.get(ownerId);
    const owner = stored === undefined || !owns(stored, key.identity) ? null : stored;
    // `roles` only when the key holds any, as the PostgreSQL store answers.
    const held = rolesHeld(key.identity, owner);
    const withRoles = held.length === 0 ? hit : { ...hit, roles: held };
    return ownerId === null ? withRoles : { ...withRoles, owner: owner === null ? null : copyOwner(owner) };
  }

  /** Whether `owner` is the owner row `identity` was issued for (see `StoredIdentity.ownerIncarnation`). */
  function owns(owner: StoredOwner, identity: StoredIdentity): boolean {
    const incarnation = identity.ownerIncarnation ?? null;
    if (incarnation === null) return owner.createdAt.getTime() <= identity.createdAt.getTime();
    return owner.incarnation === incarnation;
  }

  function revokeKey(key: StoredKey, at: Date): void {
    if (key.identity.revokedAt === null) key.identity.revokedAt = new Date(at.getTime());
    for (const secret of key.secrets) secret.expiresAt = minDate(secret.expiresAt, at);
  }

  // Each changing method runs its change through the log (after its own checks), which
  // checks the entry can be appended, runs the change and appends it with no await in
  // between: change and entry are one step.
  function logged(audit: AuditEntry | undefined, change: () => void): void {
    if (audit === undefined) change();
    else appendWith(audit, change);
  }

  return Object.freeze({
    async insertIdentity(identity: StoredIdentity, secret: StoredSecret, audit?: AuditEntry): Promise<boolean> {
      if (keys.has(identity.id)) throw new Error(`identity ${identity.id} already exists`);
      if (byDigest.has(secret.digest)) throw new Error('digest already exists');
      // The owner is checked in the same synchronous step as the insert, so a deleteOwner
      // runs wholly before (and this refuses) or wholly after (and revokes the new key).
      const ownerId = identity.ownerId ?? null;
      const owner = ownerId === null ? undefined : owners.get(ownerId);
      if (ownerId !== null && (owner === undefined || !owns(owner, identity))) return false;
      logged(audit, () => {
        const key: StoredKey = { identity: copyIdentity(identity), secrets: [copySecret(secret)] };
        keys.set(identity.id, key);
        byDigest.set(secret.digest, key);
      });
      return true;
    },

    async addSecret(identityId: string, secret: StoredSecret, expireOthersAt: Date, audit?: AuditEntry): Promise<boolean> {
      const key = keys.get(identityId);
      if (key === undefined || key.identity.revokedAt !== null) return false;
      if (byDigest.has(secret.digest)) throw new Error('digest already exists');
      logged(audit, () => {
        const ends = rotationEnds(key.secrets, secret.createdAt.getTime(), expireOthersAt.getTime());
        key.secrets.forEach((other, n) => {
          other.expiresAt = copyDate(ends[n] ?? null);
        });
        key.secrets.unshift(copySecret(secret));
        byDigest.set(secret.digest, key);
      });
      return true;
    },

    async findByDigest(digest: string): Promise<FoundKey | undefined> {
      return found(digest);
    },

    async findByDigests(digests: readonly string[]): Promise<FoundKey | undefined> {
      const digest = digests.find((d) => byDigest.has(d));
      return digest === undefined ? undefined : found(digest);
    },

    async rehashDigests(changes: readonly PepperRehash[]): Promise<void> {
      for (const { from, to, pepperId } of changes) {
        const key = byDigest.get(from);
        const secret = key?.secrets.find((s) => s.digest === from);
        if (key === undefined || secret === undefined || byDigest.has(to)) continue;
        secret.digest = to;
        secret.pepperId = pepperId;
        byDigest.delete(from);
        byDigest.set(to, key);
      }
    },

    async countByPepper(now: Date): Promise<PepperCount[]> {
      const counts = new Map<string | null, number>();
      for (const key of keys.values()) {
        if (key.identity.revokedAt !== null || (key.identity.expiresAt !== null && key.identity.expiresAt <= now)) continue;
        for (const secret of key.secrets) {
          if (secret.expiresAt !== null && secret.expiresAt <= now) continue;
          const id = secret.pepperId ?? null;
          counts.set(id, (counts.get(id) ?? 0) + 1);
        }
      }
      return [...counts].map(([pepperId, count]) => ({ pepperId, count }));
    },

    async getIdentity(id: string): Promise<StoredKey | undefined> {
      const key = keys.get(id);
      return key === undefined ? undefined : copyKey(key);
    },

    async listIdentities(query: ListIdentitiesQuery): Promise<{ keys: StoredKey[]; total?: number }> {
      const { ownerId } = query;
      const all = [...keys.values()]
        .filter((k) => ownerId === undefined || k.identity.ownerId === ownerId)
        .map((k) => ({ createdAt: k.identity.createdAt, id: k.identity.id, key: k }))
        .sort(newestFirst);
      const page = pageOf(all, query).map((row) => copyKey(row.key));
      return query.withTotal === true ? { keys: page, total: all.length } : { keys: page };
    },

    async revoke(id: string, at: Date, audit?: AuditEntry): Promise<boolean> {
      const key = keys.get(id);
      if (key === undefined) return false;
      logged(audit, () => {
        revokeKey(key, at);
      });
      return true;
    },

    async recordLeak(id: string, at: Date, url: string | null, audit?: AuditEntry): Promise<boolean> {
      const key = keys.get(id);
      if (key === undefined) return false;
      logged(audit, () => {
        // The first report is kept whole (KeyStore.recordLeak).
        if (key.identity.leakedAt === null || key.identity.leakedAt === undefined) {
          key.identity.leakedAt = new Date(at.getTime());
          key.identity.leakUrl = url;
        }
      });
      return true;
    },

    async insertOwner(owner: StoredOwner, audit?: AuditEntry): Promise<boolean> {
      if (owners.has(owner.id)) return false;
      logged(audit, () => {
        owners.set(owner.id, copyOwner({ ...owner, incarnation: owner.incarnation ?? `inc_${++incarnations}` }));
      });
      return true;
    },

    async getOwner(id: string): Promise<StoredOwner | undefined> {
      const owner = owners.get(id);
      return owner === undefined ? undefined : copyOwner(owner);
    },

    async listOwners(query: ListOwnersQuery): Promise<{ owners: StoredOwner[]; total?: number }> {
      const all = [...owners.values()].sort(newestFirst);
      const page = pageOf(all, query).map(copyOwner);
      return query.withTotal === true ? { owners: page, total: all.length } : { owners: page };
    },

    async updateOwner(id: string, patch: OwnerPatch, audit?: AuditEntry): Promise<StoredOwner | undefined> {
      const owner = owners.get(id);
      if (owner === undefined) return undefined;
      // Read and written in one synchronous step, so no other update runs in between. A
      // disable keeps an instant already set; `null` enables.
      const { quota, disabledAt } = patch;
      const next = copyOwner({
        ...owner,
        ...patch,
        quota: quota ? applyQuotaPatch(owner.quota, quota) : quota === null ? null : modeSwitched(owner.quota ?? null, patch.quotaMode),
        disabledAt: disabledAt === null ? null : (owner.disabledAt ?? disabledAt ?? null),
      });
      logged(audit, () => owners.set(id, next));
      return copyOwner(next);
    },

    async deleteOwner(id: string, at: Date, audit?: AuditEntry): Promise<boolean> {
      if (!owners.has(id)) return false;
      logged(audit, () => {
        owners.delete(id);
        for (const key of keys.values()) if (key.identity.ownerId === id) revokeKey(key, at);
      });
      return true;
    },

    async updateIdentity(id: string, changes: Partial<Pick<StoredIdentity, 'metadata' | 'ipAllowlist'>>, audit?: AuditEntry): Promise<StoredKey | undefined> {
      const key = keys.get(id);
      if (key === undefined) return undefined;
      logged(audit, () => {
        if (changes.metadata !== undefined) key.identity.metadata = freezeMetadata(changes.metadata);
        if (changes.ipAllowlist !== undefined) key.identity.ipAllowlist = changes.ipAllowlist === null ? null : Object.freeze([...changes.ipAllowlist]);
      });
      return copyKey(key);
    },

    async updateLimits(id: string, patch: IdentityLimitsPatch, audit?: AuditEntry): Promise<boolean> {
      const key = keys.get(id);
      if (key === undefined) return false;
      logged(audit, () => {
        if (patch.rateLimits !== undefined) {
          const list = patch.rateLimits === null ? null : patch.rateLimits.map((l) => ({ ...l }));
          key.identity.rateLimits = list;
          const first = list?.[0];
          key.identity.rateLimit = first === undefined ? null : { limit: first.limit, windowSeconds: first.windowSeconds };
        }
        if (patch.quota !== undefined) key.identity.quota = copyQuota(patch.quota);
      });
      return true;
    },

    async insertRole(role: StoredRole, audit?: AuditEntry): Promise<boolean> {
      if (roles.has(role.name)) return false;
      logged(audit, () => {
        roles.set(role.name, copyRole(role));
      });
      return true;
    },

    async getRole(name: string): Promise<StoredRole | undefined> {
      const role = roles.get(name);
      return role === undefined ? undefined : copyRole(role);
    },

    async listRoles(): Promise<StoredRole[]> {
      return [...roles.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(copyRole);
    },

    async updateRole(name: string, patch: RolePatch, audit?: AuditEntry): Promise<StoredRole | undefined> {
      const role = roles.get(name);
      if (role === undefined) return undefined;
      const next: StoredRole = { ...role, updatedAt: patch.updatedAt };
      if (patch.permissions !== undefined) next.permissions = [...patch.permissions];
      if (patch.description !== undefined) next.description = patch.description;
      logged(audit, () => {
        roles.set(name, copyRole(next));
      });
      return copyRole(next);
    },

    async deleteRole(name: string, audit?: AuditEntry): Promise<boolean> {
      if (!roles.has(name)) return false;
      logged(audit, () => {
        roles.delete(name);
        for (const [who, held] of grants) if (held.includes(name)) grants.set(who, held.filter((n) => n !== name));
      });
      return true;
    },

    async setRoles(target: RoleTarget, names: readonly string[], audit?: AuditEntry): Promise<'set' | 'not_found' | 'unknown_role'> {
      const who = holder(target);
      if (who === undefined) return 'not_found';
      if (!names.every((name) => roles.has(name))) return 'unknown_role';
      logged(audit, () => {
        grants.set(who, [...new Set(names)].sort());
      });
      return 'set';
    },

    async rolesOf(target: RoleTarget): Promise<string[] | undefined> {
      const who = holder(target);
      return who === undefined ? undefined : [...(grants.get(who) ?? [])];
    },

    async touchLastUsed(updates: readonly { digest: string; at: Date }[]): Promise<void> {
      for (const { digest, at } of updates) {
        const secret = byDigest.get(digest)?.secrets.find((s) => s.digest === digest);
        if (secret !== undefined && (secret.lastUsedAt === null || secret.lastUsedAt.getTime() < at.getTime())) {
          secret.lastUsedAt = new Date(at.getTime());
        }
      }
    },
  });
}
