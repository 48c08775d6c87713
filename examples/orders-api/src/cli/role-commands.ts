/**
 * `keys roles …`: a role's create, list, show, update and delete, and the roles of a key or
 * an owner.
 * @module
 */
import { createRoleAdmin, type HeldRoles, type RoleRecord } from '@keyset/core';
import { createRoleAdminHandlers } from '../app/roles-admin.ts';
import type { KeyServices } from '../keys/key-services.ts';
import { CLI_AUDIT, UsageError, type Print } from './flags.ts';

/** `roles <create|list|show|update|delete|key|owner> …`, checked now; the action runs once the database is open. */
export function rolesAction(
  rest: readonly string[],
  values: { permissions?: string | undefined; description?: string | undefined; set?: string | undefined },
  print: Print,
): (keys: KeyServices) => Promise<void> {
  const [sub, ...args] = rest;
  const one = (usage: string): string => {
    if (args.length !== 1) throw new UsageError(`usage: npx -y pnpm@10.34.9 keys roles ${usage}`);
    return args[0] as string;
  };
  const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter(Boolean);
  const roleLine = (r: Pick<RoleRecord, 'name' | 'permissions' | 'description'>): string => `${r.name}  ${r.permissions.length === 0 ? '(no permissions)' : r.permissions.join(', ')}${r.description === '' ? '' : `  "${r.description}"`}\n`;
  const heldLines = (h: HeldRoles, whose: string): string =>
    `${whose} ${h.id}: roles ${h.roles.length === 0 ? 'none' : h.roles.join(', ')}${h.inheritedRoles.length === 0 ? '' : `; from its owner ${h.inheritedRoles.join(', ')}`}\n  permissions ${h.permissions.length === 0 ? 'none' : h.permissions.join(', ')}\n`;
  const roleBody = (): Record<string, unknown> => ({
    ...(values.permissions === undefined ? {} : { permissions: list(values.permissions) }),
    ...(values.description === undefined ? {} : { description: values.description }),
  });
  const held = (whose: 'key' | 'owner') => {
    const id = one(`${whose} <${whose} id> [--set <role,...> | --set none]`);
    const set = values.set === undefined ? undefined : values.set === 'none' ? [] : list(values.set);
    return async ({ keyring }: KeyServices) => {
      const roles = createRoleAdmin(keyring, { actor: 'cli' });
      const result =
        whose === 'key'
          ? await (set === undefined ? roles.keyRoles(id) : roles.setKeyRoles(id, set, CLI_AUDIT))
          : await (set === undefined ? roles.ownerRoles(id) : roles.setOwnerRoles(id, set, CLI_AUDIT));
      print(result, heldLines(result, whose === 'key' ? 'Key' : 'Owner'));
    };
  };
  switch (sub) {
    case 'create': {
      const name = one('create <name> --permissions <scope,...> [--description <text>]');
      if (values.permissions === undefined) throw new UsageError('roles create needs --permissions <scope,...>');
      const body = { name, ...roleBody() };
      return async ({ keyring }) => {
        const role = (await createRoleAdminHandlers({ keyring }).create(body, CLI_AUDIT)).body as RoleRecord;
        print(role, `Created role ${roleLine(role)}`);
      };
    }
    case 'list':
      if (args.length !== 0) throw new UsageError('usage: npx -y pnpm@10.34.9 keys roles list');
      return async ({ keyring }) => {
        const roles = await createRoleAdmin(keyring).list();
        print(roles, roles.length === 0 ? 'No roles.\n' : roles.map(roleLine).join(''));
      };
    case 'show': {
      const name = one('show <name>');
      return async ({ keyring }) => {
        const role = await createRoleAdmin(keyring).get(name);
        print(role, roleLine(role));
      };
    }
    case 'update': {
      const name = one('update <name> [--permissions <scope,...>] [--description <text>]');
      const body = roleBody();
      if (Object.keys(body).length === 0) throw new UsageError('roles update needs --permissions or --description');
      return async ({ keyring }) => {
        const role = await createRoleAdmin(keyring).update(name, body, CLI_AUDIT);
        print(role, `Updated role ${roleLine(role)}`);
      };
    }
    case 'delete': {
      const name = one('delete <name>');
      return async ({ keyring }) => {
        await createRoleAdmin(keyring).delete(name, CLI_AUDIT);
        print({ name, deleted: true }, `Deleted role ${name}; no key or owner holds it any more.\n`);
      };
    }
    case 'key':
      return held('key');
    case 'owner':
      return held('owner');
    default:
      throw new UsageError(`roles needs a command: create, list, show, update, delete, key or owner${sub === undefined ? '' : ` (got "${sub}")`}`);
  }
}
