/**
 * The orders API's OpenAPI 3.1 description, served at `/openapi.json` and rendered at
 * `/docs`. keyset's shared parts (security scheme, problems, page envelopes, parameters,
 * RateLimit headers, error responses) come from `@keyset/openapi`; this file adds the
 * routes and the example's own schemas.
 * @module
 */
import { ROLE_SCHEMAS, rolePaths } from './roles-openapi.ts';
import {
  errorResponses,
  keySecurity,
  keysetComponents,
  pageParameters,
  pageResponses,
  type JsonObject,
} from '@keyset/openapi';
import type { KeyScheme, TotalOption } from '@keyset/core';
import { AUDIT_SCHEMAS, auditPaths } from './audit-openapi.ts';
import { SCOPES } from './keys-admin.ts';
import { MAX_CUSTOMER_LENGTH, ORDER_STATUSES } from './order-filters.ts';
import { USAGE_SCHEMAS, usagePaths } from './usage-openapi.ts';

const schema = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (body: JsonObject): JsonObject => ({ 'application/json': { schema: body } });
/** A request body with the example `/docs` pre-fills in its Try-it form: one that succeeds as sent. */
const requestBody = (name: string, example: JsonObject): JsonObject => ({ required: true, content: { 'application/json': { schema: schema(name), example } } });
const TIMESTAMP: JsonObject = { type: 'string', format: 'date-time' };
const NULLABLE_TIMESTAMP: JsonObject = { type: ['string', 'null'], format: 'date-time' };

const SCHEMAS: Record<string, JsonObject> = {
  Order: {
    type: 'object',
    required: ['id', 'createdAt', 'customer', 'amountCents', 'currency', 'status'],
    properties: {
      id: { type: 'integer' },
      createdAt: { ...TIMESTAMP, description: 'UTC with microseconds, e.g. `2025-01-31T12:00:00.123456Z`.' },
      customer: { type: 'string' },
      amountCents: { type: 'integer', minimum: 0 },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      status: { type: 'string', enum: [...ORDER_STATUSES] },
    },
  },
  DailyReport: {
    type: 'object',
    required: ['date', 'orderCount', 'currencies'],
    properties: {
      date: { type: 'string', format: 'date' },
      orderCount: { type: 'integer', minimum: 0 },
      currencies: {
        type: 'array',
        items: {
          type: 'object',
          required: ['currency', 'orderCount', 'paidCount', 'revenueCents', 'averageCents'],
          properties: {
            currency: { type: 'string' },
            orderCount: { type: 'integer' },
            paidCount: { type: 'integer' },
            revenueCents: { type: 'integer' },
            averageCents: { type: ['integer', 'null'] },
          },
        },
      },
    },
  },
  RateLimit: {
    type: ['object', 'null'],
    required: ['limit', 'windowSeconds'],
    description: 'One rate limit; in a record, the first of `rateLimits`.',
    properties: {
      name: { type: 'string', description: 'Its name in the RateLimit headers (`default` unless named).' },
      limit: { type: 'integer', minimum: 1 },
      windowSeconds: { type: 'number', exclusiveMinimum: 0 },
      burst: { type: 'integer', minimum: 1 },
      mode: { type: 'string', enum: ['enforce', 'observe'], description: '`observe` (shadow mode): decided and counted as if enforced, never refusing; not in the response headers. Default `enforce` (a record leaves it out).' },
    },
  },
  RateLimits: {
    type: ['array', 'null'],
    items: { $ref: '#/components/schemas/NamedRateLimit' },
    minItems: 1,
    maxItems: 10,
    description: 'Several named rate limits, decided together (e.g. 100 a minute and 20 a second); null: the server\'s default policy.',
  },
  QuotaInput: {
    type: ['object', 'null'],
    required: ['remaining'],
    additionalProperties: false,
    description: 'Usage credits from now on; `refill` sets them back to `amount` daily, monthly or every N seconds. Null removes the quota.',
    properties: {
      remaining: { type: 'integer', minimum: 0, maximum: 1e15 },
      refill: schema('QuotaRefill'),
      mode: { type: 'string', enum: ['enforce', 'observe'], description: '`observe` (shadow mode): counted as if enforced, never refusing. Left out keeps the current mode (enforced for a new quota).' },
    },
  },
  KeyRecord: {
    type: 'object',
    description: 'A key\'s record: never the key, never a digest, only each secret\'s last 4 characters.',
    required: ['id', 'name', 'scopes', 'rateLimit', 'rateLimits', 'quota', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt', 'secrets'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
      rateLimit: schema('RateLimit'),
      rateLimits: schema('RateLimits'),
      quota: { ...schema('Quota'), description: 'Usage credits the key spends from (a route\'s `cost`, default 1), beside its owner\'s. Null: no quota.' },
      environment: { type: 'string', description: 'The environment (key prefix) of its keys.' },
      metadata: { type: 'object', description: 'Operator data, returned on every verification: a JSON object of at most 4 KiB.' },
      ipAllowlist: schema('IpAllowlist'),
      ownerId: { type: ['string', 'null'], description: 'The owner the key belongs to (`/api/owners`).' },
      leakedAt: { ...NULLABLE_TIMESTAMP, description: 'When a secret-scanning alert first reported the key (either policy); `null`: never. A later report changes nothing.' },
      leakUrl: {
        type: ['string', 'null'],
        maxLength: 2048,
        description: 'Where that first report said the key was found: an http(s) URL cleaned of key text; `null` when it gave none (or one not recorded).',
      },
      createdAt: TIMESTAMP,
      lastUsedAt: NULLABLE_TIMESTAMP,
      expiresAt: NULLABLE_TIMESTAMP,
      revokedAt: NULLABLE_TIMESTAMP,
      secrets: {
        type: 'array',
        items: {
          type: 'object',
          required: ['last4', 'createdAt', 'lastUsedAt', 'expiresAt'],
          properties: { last4: { type: 'string' }, createdAt: TIMESTAMP, lastUsedAt: NULLABLE_TIMESTAMP, expiresAt: NULLABLE_TIMESTAMP },
        },
      },
    },
  },
  IssuedKey: {
    description: 'The record and, this once, the key itself.',
    allOf: [schema('KeyRecord'), { type: 'object', required: ['key'], properties: { key: { type: 'string' } } }],
  },
  IssueKey: {
    type: 'object',
    required: ['name', 'scopes'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1 },
      scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] }, description: 'The key\'s own scopes; empty when its roles (or its owner\'s) grant what it needs.' },
      rateLimit: schema('RateLimit'),
      rateLimits: schema('RateLimits'),
      quota: schema('QuotaInput'),
      expiresAt: NULLABLE_TIMESTAMP,
      environment: { type: ['string', 'null'], description: 'A configured environment; default: the first.' },
      metadata: { type: ['object', 'null'], description: 'A JSON object of at most 4 KiB (5 levels, 100 members per object).' },
      ipAllowlist: schema('IpAllowlist'),
      ownerId: { type: ['string', 'null'], description: 'An owner made with `POST /api/owners`: its rate limits apply beside the key\'s; disabling or deleting it refuses the key.' },
    },
  },
  UpdateKey: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      metadata: { type: ['object', 'null'], description: 'Replaces the metadata; null clears it.' },
      ipAllowlist: schema('IpAllowlist'),
    },
  },
  IpAllowlist: {
    type: ['array', 'null'],
    description: 'IPv4/IPv6 addresses or CIDR blocks the key may be used from (null: any); other addresses get 403 ip_not_allowed.',
    items: { type: 'string' },
    minItems: 1,
    maxItems: 100,
  },
  UpdateLimits: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    description: 'A member left out is kept; null removes it. `quota.refill` left out keeps the current refill. Switching a limit between `enforce` and `observe` (shadow mode) is a change like any other: audited, and in force on every instance before the response.',
    properties: {
      rateLimit: schema('RateLimit'),
      rateLimits: schema('RateLimits'),
      quota: schema('QuotaInput'),
      quotaMode: { type: 'string', enum: ['enforce', 'observe'], description: 'Switches the current quota between enforced and observed and nothing else: its count goes on. Not with `quota`; 400 without a quota.' },
    },
  },
  RotateKey: {
    type: 'object',
    required: ['overlapSeconds'],
    additionalProperties: false,
    properties: { overlapSeconds: { type: 'integer', minimum: 0, description: 'How long the old secret keeps working; 0 ends it now.' } },
  },
};

const KEY_ID: JsonObject = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const OWNER_ID: JsonObject = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^(?!\\.\\.?$)[A-Za-z0-9_.:-]{1,128}$' } };
/** An operation that needs a key with `scope`, sent in any of `security`'s forms. */
const scopedWith =
  (security: readonly JsonObject[]) =>
  (scope: string, operation: JsonObject): JsonObject => ({
    ...operation,
    security: [...security],
    description: `${typeof operation.description === 'string' ? `${operation.description} ` : ''}Scope \`${scope}\`.`,
  });

/**
 * The OpenAPI document of the orders API (`servers` left out: it is served on whatever
 * origin the client reached, and a relative document works there).
 *
 * @example
 * ```ts
 * const document = ordersOpenApi({ limits: { default: 20, max: 100 } });
 * ```
 */
export function ordersOpenApi(options: { limits: { default: number; max: number; maxOffset?: number }; ordersTotal?: TotalOption; keySchemes?: readonly KeyScheme[] }): JsonObject {
  const totalText = describeTotal(options.ordersTotal ?? 'exact');
  // The security schemes follow KEY_SCHEMES: the document offers what the server reads.
  const schemes = options.keySchemes ?? ['ApiKey'];
  const components = keysetComponents({ limits: options.limits, keyPrefix: 'ks_live', schemes });
  const scoped = scopedWith(keySecurity(schemes));
  return {
    openapi: '3.1.0',
    info: {
      title: 'orders API',
      version: '0.1.0',
      description:
        'keyset\'s reference server: orders with cursor and offset pagination, a daily report, and API-key administration.\n\n' +
        '**Which key for what.** The admin key the server wrote to `DATA_DIR/admin.key` on its first start has the scope `keys:admin` only: ' +
        'it manages keys and owners (`/api/keys`, `/api/owners`) and gets 403 `insufficient_scope` on `/api/orders` and `/api/reports/daily`. ' +
        'To read orders, issue a key with it: `POST /api/keys` with `{"name": "reader", "scopes": ["orders:read", "reports:read"]}` ' +
        '(the pre-filled example does that), then use the `key` of the 201 response, shown this once, as `Authorization: ApiKey <key>`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [{ name: 'orders' }, { name: 'reports' }, { name: 'keys' }, { name: 'owners' }, { name: 'roles' }, { name: 'usage' }, { name: 'audit' }],
    paths: {
      '/api/orders': {
        get: scoped('orders:read', {
          operationId: 'listOrders',
          tags: ['orders'],
          summary: 'List orders, newest first',
          description:
            'Sorted by `createdAt` then `id`, descending, unless `sort` says otherwise: comma-separated `createdAt`, `amountCents`, `id`, ' +
            '`-` for descending (`sort=-amountCents`); another field: 400 `invalid_sort`. `status` and `customer` filter; ' +
            'the filters and the sort are bound into the cursor (another filter or sort with it: 400 `invalid_cursor`), and ' +
            `\`Link\` URLs keep them. ${totalText}`,
          parameters: [
            ...pageParameters({ sort: true }),
            {
              name: 'status',
              in: 'query',
              description: 'Only orders with this status; repeat for any of several (`status=paid&status=pending`). Another value: 400 `invalid_request` naming `status`.',
              style: 'form',
              explode: true,
              schema: { type: 'array', items: { type: 'string', enum: [...ORDER_STATUSES] } },
            },
            {
              name: 'customer',
              in: 'query',
              description: 'Only this customer\'s orders (exact match, e.g. `cust_0042`). Once; empty or repeated: 400 `invalid_request` naming `customer`.',
              schema: { type: 'string', minLength: 1, maxLength: MAX_CUSTOMER_LENGTH },
            },
          ],
          responses: pageResponses(schema('Order')),
        }),
      },
      '/api/reports/daily': {
        get: scoped('reports:read', {
          operationId: 'dailyReport',
          tags: ['reports'],
          summary: 'One UTC day\'s totals per currency',
          parameters: [{ name: 'date', in: 'query', description: 'A calendar day, `YYYY-MM-DD`; default today (UTC).', schema: { type: 'string', format: 'date' } }],
          responses: { '200': { description: 'The report.', content: json(schema('DailyReport')) }, ...errorResponses([400, 401, 403, 429, 503]) },
        }),
      },
      '/api/keys': {
        get: scoped('keys:admin', {
          operationId: 'listKeys',
          tags: ['keys'],
          summary: 'List keys, newest first',
          parameters: pageParameters(),
          responses: pageResponses(schema('KeyRecord')),
        }),
        post: scoped('keys:admin', {
          operationId: 'issueKey',
          tags: ['keys'],
          summary: 'Issue a key (shown once, in this response)',
          requestBody: requestBody('IssueKey', { name: 'reporting job', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 100, windowSeconds: 60 } }),
          responses: { '201': { description: 'Issued.', content: json(schema('IssuedKey')) }, ...errorResponses([400, 401, 403, 429, 503]) },
        }),
      },
      '/api/keys/{id}': {
        parameters: [KEY_ID],
        get: scoped('keys:admin', {
          operationId: 'getKey',
          tags: ['keys'],
          summary: 'One key\'s record',
          responses: { '200': { description: 'The record.', content: json(schema('KeyRecord')) }, ...errorResponses([401, 403, 404, 429, 503]) },
        }),
        patch: scoped('keys:admin', {
          operationId: 'updateKey',
          tags: ['keys'],
          summary: 'Replace a key\'s metadata and/or IP allowlist; every instance drops its cached copy first',
          requestBody: requestBody('UpdateKey', { metadata: { team: 'data' } }),
          responses: { '200': { description: 'The updated record.', content: json(schema('KeyRecord')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
        }),
        delete: scoped('keys:admin', {
          operationId: 'revokeKey',
          tags: ['keys'],
          summary: 'Revoke every secret of a key now',
          responses: { '204': { description: 'Revoked.' }, ...errorResponses([401, 403, 404, 429, 503]) },
        }),
      },
      '/api/keys/{id}/limits': {
        parameters: [KEY_ID],
        patch: scoped('keys:admin', {
          operationId: 'updateKeyLimits',
          tags: ['keys'],
          summary: 'Change a key\'s rate limits and/or quota; every instance drops its cached copy first',
          requestBody: requestBody('UpdateLimits', { rateLimits: [{ name: 'default', limit: 200, windowSeconds: 60 }], quota: { remaining: 10000, refill: { amount: 10000, interval: 'monthly' } } }),
          responses: { '200': { description: 'The updated record.', content: json(schema('KeyRecord')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
        }),
      },
      '/api/keys/{id}/rotate': {
        parameters: [KEY_ID],
        post: scoped('keys:admin', {
          operationId: 'rotateKey',
          tags: ['keys'],
          summary: 'Issue a new secret; the old one works for the overlap',
          requestBody: requestBody('RotateKey', { overlapSeconds: 3600 }),
          responses: { '201': { description: 'Rotated.', content: json(schema('IssuedKey')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
        }),
      },
      '/api/owners': {
        get: scoped('keys:admin', {
          operationId: 'listOwners',
          tags: ['owners'],
          summary: 'List owners, newest first',
          parameters: pageParameters(),
          responses: pageResponses(schema('OwnerRecord')),
        }),
        post: scoped('keys:admin', {
          operationId: 'createOwner',
          tags: ['owners'],
          summary: 'Create an owner (an id of yours, shared rate limits and quota, metadata)',
          requestBody: requestBody('CreateOwner', { id: 'cust_0042', metadata: { plan: 'pro' }, rateLimits: [{ name: 'burst', limit: 50, windowSeconds: 1 }] }),
          responses: { '201': { description: 'Created.', content: json(schema('OwnerRecord')) }, ...errorResponses([400, 401, 403, 429, 503]) },
        }),
      },
      '/api/owners/{id}': {
        parameters: [OWNER_ID],
        get: scoped('keys:admin', {
          operationId: 'getOwner',
          tags: ['owners'],
          summary: 'One owner, with its quota\'s live count',
          responses: { '200': { description: 'The owner.', content: json(schema('OwnerRecord')) }, ...errorResponses([401, 403, 404, 429, 503]) },
        }),
        patch: scoped('keys:admin', {
          operationId: 'updateOwner',
          tags: ['owners'],
          summary: 'Change metadata, rate limits, quota or disable; every instance drops its cached keys of the owner first',
          requestBody: requestBody('UpdateOwner', { metadata: { plan: 'enterprise' } }),
          responses: { '200': { description: 'The updated owner.', content: json(schema('OwnerRecord')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
        }),
        delete: scoped('keys:admin', {
          operationId: 'deleteOwner',
          tags: ['owners'],
          summary: 'Delete an owner and revoke all its keys; every instance refuses them before the response',
          responses: { '204': { description: 'Deleted.' }, ...errorResponses([401, 403, 404, 429, 503]) },
        }),
      },
      '/api/owners/{id}/keys': {
        parameters: [OWNER_ID],
        get: scoped('keys:admin', {
          operationId: 'listOwnerKeys',
          tags: ['owners'],
          summary: 'The owner\'s keys, newest first',
          parameters: pageParameters(),
          responses: { ...pageResponses(schema('KeyRecord')), ...errorResponses([404]) },
        }),
      },
      ...usagePaths(scoped, { key: KEY_ID, owner: OWNER_ID }),
      ...rolePaths(scoped, { key: KEY_ID, owner: OWNER_ID }),
      ...auditPaths(scoped),
    },
    components: { ...components, schemas: { ...(components.schemas as JsonObject), ...SCHEMAS, ...USAGE_SCHEMAS, ...AUDIT_SCHEMAS, ...ROLE_SCHEMAS } },
  };
}

/** What offset mode's `total` means under the orders endpoint's total mode. */
function describeTotal(total: TotalOption): string {
  const mode = typeof total === 'string' ? total : total.mode;
  const cap = typeof total === 'object' && 'cap' in total ? total.cap : undefined;
  if (mode === 'none') return 'In offset mode `total` is `null`: the endpoint does not count.';
  if (mode === 'estimated') return "In offset mode `total` is the query planner's estimate, marked `totalEstimated: true` (exact on the last page).";
  if (cap !== undefined) return `In offset mode \`total\` counts up to ${cap} orders; more is \`total: ${cap}\` with \`totalAtLeast: true\`.`;
  return 'In offset mode `total` is the exact count of matching orders.';
}
