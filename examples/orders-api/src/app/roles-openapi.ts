/**
 * The role routes in the OpenAPI document: `/api/roles`, `/api/roles/{name}` and the roles
 * of a key or an owner, with their schemas, merged into `ordersOpenApi` (openapi.ts).
 * @module
 */
import { errorResponses, type JsonObject } from '@keyset/openapi';
import { MAX_ROLES } from './roles-admin.ts';

const schema = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (body: JsonObject): JsonObject => ({ 'application/json': { schema: body } });
const requestBody = (name: string, example: JsonObject): JsonObject => ({ required: true, content: { 'application/json': { schema: schema(name), example } } });

const ROLE_NAME: JsonObject = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$' };
const PERMISSIONS: JsonObject = { type: 'array', maxItems: 256, items: { type: 'string', pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,128}$' }, description: 'Scope tokens every key holding the role holds.' };
const ROLE_NAMES: JsonObject = { type: 'array', maxItems: 64, items: ROLE_NAME };

/** The schemas of the role routes. */
export const ROLE_SCHEMAS: Record<string, JsonObject> = {
  RoleRecord: {
    type: 'object',
    required: ['name', 'permissions', 'description', 'createdAt', 'updatedAt'],
    properties: { name: ROLE_NAME, permissions: PERMISSIONS, description: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' } },
  },
  CreateRole: {
    type: 'object',
    required: ['name', 'permissions'],
    additionalProperties: false,
    properties: { name: ROLE_NAME, permissions: PERMISSIONS, description: { type: 'string', maxLength: 500 } },
  },
  UpdateRole: { type: 'object', additionalProperties: false, minProperties: 1, properties: { permissions: PERMISSIONS, description: { type: 'string', maxLength: 500 } } },
  SetRoles: { type: 'object', required: ['roles'], additionalProperties: false, properties: { roles: ROLE_NAMES } },
  HeldRoles: {
    type: 'object',
    required: ['id', 'roles', 'inheritedRoles', 'permissions'],
    properties: {
      id: { type: 'string' },
      roles: { ...ROLE_NAMES, description: 'Its own roles, by name.' },
      inheritedRoles: { ...ROLE_NAMES, description: "A key's owner's roles (empty for an owner, or a key without one)." },
      permissions: { type: 'array', items: { type: 'string' }, description: "Everything it holds: a key's own scopes, then its roles' and its owner's roles' permissions." },
    },
  },
};

/** The role path items, with `scoped` adding the key requirement as the other admin routes have it. */
export function rolePaths(scoped: (scope: string, operation: JsonObject) => JsonObject, ids: { key: JsonObject; owner: JsonObject }): Record<string, JsonObject> {
  const name: JsonObject = { name: 'name', in: 'path', required: true, schema: ROLE_NAME };
  const held = (whose: 'key' | 'owner'): JsonObject => ({
    parameters: [ids[whose]],
    get: scoped('keys:admin', {
      operationId: `get${whose === 'key' ? 'Key' : 'Owner'}Roles`,
      tags: ['roles'],
      summary: `The ${whose}'s roles and every permission they come to`,
      responses: { '200': { description: 'Its roles.', content: json(schema('HeldRoles')) }, ...errorResponses([401, 403, 404, 429, 503]) },
    }),
    put: scoped('keys:admin', {
      operationId: `set${whose === 'key' ? 'Key' : 'Owner'}Roles`,
      tags: ['roles'],
      summary: `Replace the ${whose}'s roles; every instance drops its cached keys first`,
      requestBody: requestBody('SetRoles', { roles: ['analyst'] }),
      responses: { '200': { description: 'Its roles now.', content: json(schema('HeldRoles')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
    }),
  });
  return {
    '/api/roles': {
      get: scoped('keys:admin', {
        operationId: 'listRoles',
        tags: ['roles'],
        summary: `Every role, by name (at most ${MAX_ROLES}, so one response holds them all)`,
        responses: {
          '200': { description: 'The roles.', content: json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: schema('RoleRecord') } } }) },
          ...errorResponses([401, 403, 429, 503]),
        },
      }),
      post: scoped('keys:admin', {
        operationId: 'createRole',
        tags: ['roles'],
        summary: 'Create a role: permissions under a name, for keys and owners to hold',
        requestBody: requestBody('CreateRole', { name: 'analyst', permissions: ['orders:read', 'reports:read'], description: 'dashboards' }),
        responses: { '201': { description: 'Created.', content: json(schema('RoleRecord')) }, ...errorResponses([400, 401, 403, 429, 503]) },
      }),
    },
    '/api/roles/{name}': {
      parameters: [name],
      get: scoped('keys:admin', {
        operationId: 'getRole',
        tags: ['roles'],
        summary: 'One role',
        responses: { '200': { description: 'The role.', content: json(schema('RoleRecord')) }, ...errorResponses([401, 403, 404, 429, 503]) },
      }),
      patch: scoped('keys:admin', {
        operationId: 'updateRole',
        tags: ['roles'],
        summary: 'Change its permissions or description; every instance drops its cached keys holding it first',
        requestBody: requestBody('UpdateRole', { permissions: ['reports:read'] }),
        responses: { '200': { description: 'The role now.', content: json(schema('RoleRecord')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
      }),
      delete: scoped('keys:admin', {
        operationId: 'deleteRole',
        tags: ['roles'],
        summary: 'Delete a role and take it from every key and owner; every instance applies it before the response',
        responses: { '204': { description: 'Deleted.' }, ...errorResponses([401, 403, 404, 429, 503]) },
      }),
    },
    '/api/keys/{id}/roles': held('key'),
    '/api/owners/{id}/roles': held('owner'),
  };
}
