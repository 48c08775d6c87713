/**
 * `/api/roles`, `/api/keys/{id}/roles` and `/api/owners/{id}/roles` (scope `keys:admin`):
 * roles bundle permissions under a name; keys and owners hold them, and a key holds its
 * own scopes, its roles' permissions and its owner's roles' (docs/api-keys.md, "Roles").
 * Every change is audited and reaches cached keys on every instance before the response.
 * @module
 */
import { createRoleAdmin, type AuditContext, type CreateRoleInput, type Keyring, type UpdateRoleInput } from '@keyset/core';
import type { KnownOptions } from '@keyset/core/adapter';
import type { AppResponse } from './app-types.ts';
import { invalid, rejectUnknownMembers, type BodyShape } from './validation.ts';

const CREATE_BODY = { name: true, permissions: true, description: true } as const satisfies KnownOptions<CreateRoleInput> & BodyShape;
const UPDATE_BODY = { permissions: true, description: true } as const satisfies KnownOptions<UpdateRoleInput> & BodyShape;
const ROLES_BODY = { roles: true } as const satisfies BodyShape;

/**
 * At most this many roles: `GET /api/roles` answers all of them in one response, so the
 * list stays bounded without a cursor (roles are the application's vocabulary, not data).
 */
export const MAX_ROLES = 1000;

/** The role handlers over `keyring` (through `createRoleAdmin`). */
export function createRoleAdminHandlers(deps: { keyring: Keyring }) {
  const admin = createRoleAdmin(deps.keyring);

  function rolesOf(body: Record<string, unknown>): readonly string[] {
    rejectUnknownMembers(body, ROLES_BODY);
    if (body.roles === undefined) throw invalid('roles', 'Send `roles`: an array of role names (`[]` removes every role).');
    return body.roles as readonly string[];
  }

  return Object.freeze({
    async create(body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      rejectUnknownMembers(body, CREATE_BODY);
      if ((await admin.list()).length >= MAX_ROLES) throw invalid('name', `There are ${MAX_ROLES} roles already: delete one first.`);
      return { status: 201, body: await admin.create(body as unknown as CreateRoleInput, context) };
    },
    async list(): Promise<AppResponse> {
      return { status: 200, body: { items: await admin.list() } };
    },
    async get(name: string): Promise<AppResponse> {
      return { status: 200, body: await admin.get(name) };
    },
    async update(name: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      rejectUnknownMembers(body, UPDATE_BODY);
      return { status: 200, body: await admin.update(name, body as UpdateRoleInput, context) };
    },
    async remove(name: string, context?: AuditContext): Promise<AppResponse> {
      await admin.delete(name, context);
      return { status: 204 };
    },
    async keyRoles(id: string): Promise<AppResponse> {
      return { status: 200, body: await admin.keyRoles(id) };
    },
    async setKeyRoles(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      return { status: 200, body: await admin.setKeyRoles(id, rolesOf(body), context) };
    },
    async ownerRoles(id: string): Promise<AppResponse> {
      return { status: 200, body: await admin.ownerRoles(id) };
    },
    async setOwnerRoles(id: string, body: Record<string, unknown>, context?: AuditContext): Promise<AppResponse> {
      return { status: 200, body: await admin.setOwnerRoles(id, rolesOf(body), context) };
    },
  });
}
