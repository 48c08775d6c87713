/**
 * `GET /api/audit` in the OpenAPI document: the operation and the `AuditEntry` schema,
 * merged into `ordersOpenApi` (openapi.ts).
 * @module
 */
import { AUDIT_ACTIONS } from '@keyset/core/adapter';
import { pageParameters, pageResponses, type JsonObject } from '@keyset/openapi';

/** The schemas `GET /api/audit` uses. */
export const AUDIT_SCHEMAS: Record<string, JsonObject> = {
  AuditEntry: {
    type: 'object',
    required: ['id', 'at', 'actor', 'action', 'target', 'changes', 'requestId'],
    properties: {
      id: { type: 'string', pattern: '^aud_[0-9A-Za-z]{22}$' },
      at: { type: 'string', format: 'date-time', description: 'When the change was made (UTC, milliseconds).' },
      actor: { type: 'string', description: 'Who made it: the admin key\'s id, `cli`, `secret-scanning`, `bootstrap`, or a name the application gave.' },
      action: { type: 'string', enum: [...AUDIT_ACTIONS] },
      target: {
        type: 'object',
        required: ['type', 'id'],
        properties: { type: { type: 'string', enum: ['key', 'owner', 'role'] }, id: { type: 'string' } },
      },
      changes: {
        type: 'object',
        description: 'Each changed public field with its value before and after (`null`: absent). Never key text, a digest or a pepper.',
        additionalProperties: { type: 'object', required: ['before', 'after'], properties: { before: {}, after: {} } },
      },
      requestId: { type: ['string', 'null'], description: 'The `X-Request-Id` of the admin request when it was in the safe form (1-64 of A-Z a-z 0-9 . _ : -, no 8 letters and digits in a row outside a UUID), else `req_<uuid>` made by the server; `null` from the CLI or code.' },
    },
  },
};

/** The `/api/audit` path item, with `scoped` adding the key requirement as the other admin routes have it. */
export function auditPaths(scoped: (scope: string, operation: JsonObject) => JsonObject): Record<string, JsonObject> {
  const text = (name: string, description: string): JsonObject => ({ name, in: 'query', description, schema: { type: 'string', minLength: 1, maxLength: 128 } });
  const time = (name: string, description: string): JsonObject => ({ name, in: 'query', description, schema: { type: 'string', format: 'date-time' } });
  return {
    '/api/audit': {
      get: scoped('keys:admin', {
        operationId: 'listAudit',
        tags: ['audit'],
        summary: 'The audit log of administrative changes, newest first',
        description:
          'One entry per change to a key, an owner or a role, made through this API, the CLI, secret-scanning alerts or code. ' +
          'The filters are bound into the cursor (another filter with it: 400 `invalid_cursor`); a bad filter is 400 `invalid_request` naming it.',
        parameters: [
          ...pageParameters(),
          text('target', 'Only entries about this key id, owner id or role name.'),
          text('actor', 'Only entries made by this actor (an admin key id, `cli`, `secret-scanning`, …).'),
          { name: 'action', in: 'query', description: 'Only entries of this action.', schema: { type: 'string', enum: [...AUDIT_ACTIONS] } },
          time('from', 'Only entries at or after this instant (RFC 3339 with an offset).'),
          time('to', 'Only entries before this instant (RFC 3339 with an offset); not before `from`.'),
        ],
        responses: pageResponses({ $ref: '#/components/schemas/AuditEntry' }),
      }),
    },
  };
}
