/**
 * The usage routes' part of the OpenAPI document (`openapi.ts` merges it): their paths,
 * query parameters and response schemas, from the same constants the handlers check.
 * @module
 */
import { MAX_USAGE_BUCKETS, USAGE_OUTCOMES } from '@keyset/core/adapter';
import { errorResponses, type JsonObject } from '@keyset/openapi';

const schema = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (body: JsonObject): JsonObject => ({ 'application/json': { schema: body } });
const TIMESTAMP: JsonObject = { type: 'string', format: 'date-time' };
const COUNT: JsonObject = { type: 'integer', minimum: 0 };

/** The usage schemas. */
export const USAGE_SCHEMAS: Record<string, JsonObject> = {
  UsageRequests: {
    type: 'object',
    required: [...USAGE_OUTCOMES],
    additionalProperties: false,
    description: 'Requests per outcome of the limiter\'s decision.',
    properties: Object.fromEntries(USAGE_OUTCOMES.map((outcome) => [outcome, COUNT])),
  },
  UsageCounts: {
    type: 'object',
    required: ['requests', 'credits'],
    properties: { requests: schema('UsageRequests'), credits: { ...COUNT, description: 'Quota credits spent.' } },
  },
  UsageBucket: {
    type: 'object',
    required: ['start', 'requests', 'credits'],
    properties: { start: TIMESTAMP, requests: schema('UsageRequests'), credits: COUNT },
  },
  UsageReport: {
    type: 'object',
    required: ['interval', 'from', 'to', 'buckets', 'totals'],
    properties: {
      keyId: { type: 'string', description: 'On `GET /api/keys/{id}/usage`.' },
      ownerId: { type: 'string', description: 'On `GET /api/owners/{id}/usage`.' },
      interval: { type: 'string', enum: ['minute', 'hour', 'day'] },
      from: { ...TIMESTAMP, description: 'The first bucket\'s start (`from` aligned down to the interval).' },
      to: { ...TIMESTAMP, description: 'The end of the range (exclusive).' },
      buckets: { type: 'array', items: schema('UsageBucket'), description: 'Every bucket of the range, oldest first, zeros included.' },
      totals: schema('UsageCounts'),
    },
  },
  UsageTop: {
    type: 'object',
    required: ['from', 'to', 'by', 'items'],
    properties: {
      from: TIMESTAMP,
      to: TIMESTAMP,
      by: { type: 'string', enum: ['requests', 'refusals'] },
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['keyId', 'requests', 'refusals', 'credits'],
          properties: { keyId: { type: 'string' }, requests: COUNT, refusals: { ...COUNT, description: 'Every outcome but `allowed`.' }, credits: COUNT },
        },
      },
    },
  },
};

const limits = `At most ${MAX_USAGE_BUCKETS.minute} minute, ${MAX_USAGE_BUCKETS.hour} hour or ${MAX_USAGE_BUCKETS.day} day buckets per request: a longer range is 400 \`invalid_request\` naming \`from\`.`;
const RANGE: readonly JsonObject[] = [
  { name: 'from', in: 'query', description: 'Start, RFC 3339 with an offset; aligned down to the interval. Default: the newest whole buckets up to `to`: 60 minutes, 24 hours or 30 days.', schema: TIMESTAMP },
  { name: 'to', in: 'query', description: 'End (exclusive), RFC 3339 with an offset. Default: now.', schema: TIMESTAMP },
  { name: 'interval', in: 'query', description: `Bucket size (UTC). ${limits}`, schema: { type: 'string', enum: ['minute', 'hour', 'day'], default: 'hour' } },
];

/** The usage paths; `scoped` adds the security and scope text as for every other route, `ids` the path parameters. */
export function usagePaths(scoped: (scope: string, operation: JsonObject) => JsonObject, ids: { key: JsonObject; owner: JsonObject }): Record<string, JsonObject> {
  const report = (operationId: string, summary: string): JsonObject =>
    scoped('keys:admin', {
      operationId,
      tags: ['usage'],
      summary,
      description: 'Counted by every instance in memory and written every `USAGE_FLUSH_MS` (5 s by default): the last few seconds may not show yet.',
      parameters: [...RANGE],
      responses: { '200': { description: 'The usage.', content: json(schema('UsageReport')) }, ...errorResponses([400, 401, 403, 404, 429, 503]) },
    });
  return {
    '/api/keys/{id}/usage': { parameters: [ids.key], get: report('getKeyUsage', 'A key\'s requests per outcome and credits, per bucket') },
    '/api/owners/{id}/usage': { parameters: [ids.owner], get: report('getOwnerUsage', 'An owner\'s requests per outcome and credits, per bucket: every key issued under this owner id, an earlier owner\'s deleted under the same id included (usage follows the id)') },
    '/api/usage/top': {
      get: scoped('keys:admin', {
        operationId: 'topUsage',
        tags: ['usage'],
        summary: 'The keys with the most requests or refusals in a range',
        parameters: [
          ...RANGE,
          { name: 'by', in: 'query', schema: { type: 'string', enum: ['requests', 'refusals'], default: 'requests' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
        ],
        responses: { '200': { description: 'Most first, ties by key id.', content: json(schema('UsageTop')) }, ...errorResponses([400, 401, 403, 429, 503]) },
      }),
    },
  };
}
