/**
 * The roles of the memory key store: permissions bundled under a name, held by keys and
 * owners, kept beside the keys and owners of the store that made them.
 * @module
 */
import type { AuditEntry } from '../../audit/audit-store.ts';
import type { KeyStore, RolePatch, RoleTarget, StoredIdentity, StoredKey, StoredOwner, StoredRole } from '../key-store.ts';
import { copyRole } from './memory-copies.ts';

/** What the store's roles give it: the `KeyStore` role methods, and the roles a found key holds. */
export interface MemoryRoles {
  methods: Required<Pick<KeyStore, 'insertRole' | 'getRole' | 'listRoles' | 'updateRole' | 'deleteRole' | 'setRoles' | 'rolesOf'>>;
  /** The roles a found key holds: its own, then its owner's. */
  held(identity: StoredIdentity, owner: StoredOwner | null): Pick<StoredRole, 'name' | 'permissions'>[];
}

/**
 * Roles over the store's `keys` and `owners` (read only, to find a grant's holder); each
 * change goes through `logged`, the store's change-and-audit-entry step.
 */
export function memoryRoles(
  keys: ReadonlyMap<string, StoredKey>,
  owners: ReadonlyMap<string, StoredOwner>,
  logged: (audit: AuditEntry | undefined, change: () => void) => void,
): MemoryRoles {
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

  return {
    held: rolesHeld,
    methods: {
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
    },
  };
}
