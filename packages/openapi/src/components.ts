/**
 * The OpenAPI 3.1 components every keyset API shares: the security schemes the keyring
 * accepts (`ApiKey`, and `Bearer`/`XApiKey` when its `schemes` list them), the
 * RFC 9457 problem schema whose `code` enum is core's `ERROR_CATALOGUE` (so a code added
 * to core appears here with no edit), page envelopes, the pagination parameters, the
 * RateLimit headers and the error responses by status. Plain JSON: merge it into your
 * document's `components`.
 * @module
 */
import { ERROR_CATALOGUE, KEY_SCHEMES, type ErrorCode, type KeyScheme } from '@keyset/core';
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { JsonObject } from './json.ts';
import { ownerSchemas } from './owner-schemas.ts';

/** Options of `keysetComponents()`. */
export interface KeysetComponentsOptions {
  /**
   * Page-size limits the API enforces, for the `limit` parameter's schema: the same
   * object the paginator takes. With `overMax: 'clamp'` a larger `limit` is described
   * as served at the maximum instead of refused; with `maxOffset`, `offset` gets that
   * maximum.
   * @default { default: 20, max: 100 }
   */
  limits?: { default: number; max: number; overMax?: 'reject' | 'clamp'; maxOffset?: number };
  /**
   * The accepted `sort` values, when the API lets clients choose a sort (e.g.
   * `['-createdAt', 'createdAt']`). Without them `sort` is a plain string.
   * @default none
   */
  sortValues?: readonly string[];
  /**
   * The key prefix, shown in the security scheme's description (`acme_live_…`).
   * @default none
   */
  keyPrefix?: string;
  /**
   * Where the API reads keys: the keyring's `schemes`. Each becomes a security scheme
   * (`ApiKey`, `Bearer`, `XApiKey`); pass the same list to `keySecurity()` for the
   * operations' `security`.
   * @default ['ApiKey']
   */
  schemes?: readonly KeyScheme[];
}

/** Every name `KeysetComponentsOptions` knows, checked on each call. */
const COMPONENTS_OPTIONS = { limits: { default: true, max: true, overMax: true, maxOffset: true }, sortValues: true, keyPrefix: true, schemes: true } as const satisfies KnownOptions<KeysetComponentsOptions>;

/** The security scheme component's name for each `KeyScheme` (component names are identifiers). */
export const SECURITY_SCHEME_NAMES: Readonly<Record<KeyScheme, string>> = Object.freeze({ ApiKey: 'ApiKey', Bearer: 'Bearer', 'X-API-Key': 'XApiKey' });

/** `schemes` checked (known entries, each once, at least one), in `KEY_SCHEMES` order. */
export function checkedSchemes(schemes: readonly KeyScheme[] = ['ApiKey']): KeyScheme[] {
  if (!Array.isArray(schemes) || schemes.length === 0 || !schemes.every((scheme) => KEY_SCHEMES.includes(scheme)) || new Set(schemes).size !== schemes.length) {
    throw new TypeError(`schemes must list one or more of ${KEY_SCHEMES.join(', ')}, each once, got ${JSON.stringify(schemes)}`);
  }
  return KEY_SCHEMES.filter((scheme) => schemes.includes(scheme));
}

/** Statuses a keyset error response can have, each with a component name. */
export const ERROR_RESPONSES: Readonly<Record<number, string>> = Object.freeze({
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
});

const ref = (kind: string, name: string): JsonObject => ({ $ref: `#/components/${kind}/${name}` });

/** Every problem code core can answer with (plus the bare 500's `internal_error`), per status. */
export function problemCodes(): Record<number, ErrorCode[]> {
  const byStatus: Record<number, ErrorCode[]> = {};
  for (const [code, { status }] of Object.entries(ERROR_CATALOGUE) as [ErrorCode, { status: number }][]) {
    (byStatus[status] ??= []).push(code);
  }
  return byStatus;
}

/**
 * The `ApiKey` scheme: the `Authorization` header, whose value is `ApiKey <key>`.
 *
 * Described as `type: apiKey` named `Authorization`, not as `type: http` with
 * `scheme: ApiKey`: OpenAPI's `http` type is for schemes in the IANA registry, and
 * tools implement `basic` and `bearer` there (Scalar shows any other scheme as a username
 * and password and sends `Basic …`). An `apiKey` header is what they all support: the
 * value is sent as typed (Scalar, Swagger UI), or with a prefix the client is given
 * (openapi-generator's `apiKeyPrefix`).
 */
function apiKeyScheme(keyPrefix: string | undefined): JsonObject {
  const looks = keyPrefix === undefined ? '' : ` (keys look like \`${keyPrefix}_…\`)`;
  return {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      `The \`Authorization\` header with the \`ApiKey\` scheme: \`Authorization: ApiKey <key>\`${looks}. ` +
      'A tool that sends this value as typed needs the whole of it, `ApiKey ` included. ' +
      'Never in the query string: a key there is refused with 400 `api_key_in_query`.',
  };
}

/** The `Bearer` scheme: `Authorization: Bearer <key>`, the IANA `bearer` scheme every tool sends. */
function bearerScheme(keyPrefix: string | undefined): JsonObject {
  const looks = keyPrefix === undefined ? '' : ` (keys look like \`${keyPrefix}_…\`)`;
  return {
    type: 'http',
    scheme: 'bearer',
    description: `The API key as a bearer token: \`Authorization: Bearer <key>\`${looks}. Never in the query string.`,
  };
}

/** The `X-API-Key` header: the key as its whole value. */
function xApiKeyScheme(keyPrefix: string | undefined): JsonObject {
  const looks = keyPrefix === undefined ? '' : ` (keys look like \`${keyPrefix}_…\`)`;
  return {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: `The API key as the whole value of the \`X-API-Key\` header${looks}. Not together with an \`Authorization\` header (400). Never in the query string.`,
  };
}

const SCHEME_COMPONENTS: Readonly<Record<KeyScheme, (keyPrefix: string | undefined) => JsonObject>> = { ApiKey: apiKeyScheme, Bearer: bearerScheme, 'X-API-Key': xApiKeyScheme };

function problemSchema(): JsonObject {
  return {
    type: 'object',
    description: 'An RFC 9457 problem. `code` is stable and documented; `detail` is for humans and may change.',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string', format: 'uri-reference', examples: ['urn:keyset:problem:invalid_cursor'] },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      detail: { type: 'string' },
      code: { type: 'string', enum: [...Object.keys(ERROR_CATALOGUE), 'internal_error'] },
      instance: { type: 'string', description: 'The request path, never its query string.' },
      field: { type: 'string', description: '`invalid_request`: the offending body field or parameter.' },
      parameter: { type: 'string', description: '`invalid_limit`, `invalid_offset`: the parameter.' },
      parameters: { type: 'array', items: { type: 'string' }, description: '`conflicting_pagination`: the parameters.' },
      max_limit: { type: 'integer', description: '`limit_too_large`: the largest accepted `limit`.' },
      max_offset: { type: 'integer', description: '`offset_too_large`: the largest accepted `offset`.' },
      missing_scopes: { type: 'array', items: { type: 'string' }, description: '`insufficient_scope`: what the key lacks: a set of permissions that, granted beside its own scopes and its roles\' permissions, would satisfy the route (for an `or`, its cheapest part).' },
      allowed_methods: { type: 'array', items: { type: 'string' }, description: '`method_not_allowed`: same as `Allow`.' },
      retry_after: { type: 'integer', description: '`rate_limited`, `quota_exhausted`, `concurrency_limited`, `usage_reads_busy`: seconds until a retry can succeed (same as `Retry-After`).' },
      max_in_flight: { type: 'integer', description: '`concurrency_limited`: how many requests of the key (or of its owner) may be in progress at once.' },
      limited: { type: 'string', enum: ['key', 'owner'], description: '`concurrency_limited`: whose in-flight limit refused the request.' },
      quota: { type: 'string', enum: ['key', 'owner'], description: '`quota_exhausted`: whose quota ran out, the key\'s own or its owner\'s (never the owner id).' },
      quota_remaining: { type: 'integer', minimum: 0, description: '`quota_exhausted`: the credits left in that quota.' },
      cost: { type: 'integer', minimum: 1, description: '`quota_exhausted`: the credits the request would have spent.' },
    },
    additionalProperties: true,
  };
}

function errorResponse(status: number, codes: readonly ErrorCode[]): JsonObject {
  const headers: Record<string, JsonObject> = {};
  if (status === 401) headers['WWW-Authenticate'] = ref('headers', 'WWW-Authenticate');
  if (status === 405) headers.Allow = ref('headers', 'Allow');
  if (status === 429) {
    headers['Retry-After'] = ref('headers', 'Retry-After');
    headers.RateLimit = ref('headers', 'RateLimit');
    headers['RateLimit-Policy'] = ref('headers', 'RateLimit-Policy');
  }
  if (status === 503) headers['Retry-After'] = ref('headers', 'Retry-After');
  const titles = codes.map((code) => `\`${code}\` (${ERROR_CATALOGUE[code].title})`).join(', ');
  return {
    description: `Problem: ${titles}.`,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [ref('schemas', 'Problem'), { type: 'object', properties: { status: { const: status }, code: { enum: [...codes] } } }],
        },
      },
    },
  };
}

/**
 * The components keyset defines, for a document's `components` (merge them with yours).
 *
 * @example
 * ```ts
 * const components = keysetComponents({ limits: { default: 20, max: 100 } });
 * const document = { openapi: '3.1.0', info: { title: 'Orders', version: '1' }, paths: {}, components };
 * ```
 */
export function keysetComponents(options: KeysetComponentsOptions = {}): JsonObject {
  assertKnownOptions('keysetComponents', options, COMPONENTS_OPTIONS);
  const { limits = { default: 20, max: 100 }, sortValues, keyPrefix } = options;
  const schemes = checkedSchemes(options.schemes);
  const responses: Record<string, JsonObject> = {};
  for (const [status, codes] of Object.entries(problemCodes())) {
    const name = ERROR_RESPONSES[Number(status)];
    if (name !== undefined) responses[name] = errorResponse(Number(status), codes);
  }
  return {
    securitySchemes: Object.fromEntries(schemes.map((scheme) => [SECURITY_SCHEME_NAMES[scheme], SCHEME_COMPONENTS[scheme](keyPrefix)])),
    schemas: {
      Problem: problemSchema(),
      CursorPage: {
        type: 'object',
        description: 'Cursor mode: pass `nextCursor` back as `cursor` (or follow `Link: rel="next"`) until it is null.',
        required: ['items', 'nextCursor'],
        properties: {
          items: { type: 'array' },
          nextCursor: { type: ['string', 'null'] },
          prevCursor: { type: ['string', 'null'], description: 'Pass back as `cursor` for the page before (or follow `Link: rel="prev"`); null on the first page.' },
        },
      },
      OffsetPage: {
        type: 'object',
        description:
          'Offset mode (`offset` given): one page and the number of items, as the endpoint counts it: exact, ' +
          'an estimate (`totalEstimated: true`), at least `total` (`totalAtLeast: true`, a capped count), or not counted (`total: null`).',
        required: ['items', 'total'],
        properties: {
          items: { type: 'array' },
          total: { type: ['integer', 'null'], minimum: 0 },
          totalEstimated: { type: 'boolean', const: true, description: '`total` is the database\'s estimate; the last page\'s total is always exact.' },
          totalAtLeast: { type: 'boolean', const: true, description: 'The collection has at least `total` items (the count stopped at a cap).' },
        },
      },
      ...ownerSchemas(),
    },
    parameters: {
      limit: {
        name: 'limit',
        in: 'query',
        description:
          limits.overMax === 'clamp'
            ? `Page size, 1 to ${limits.max}; a larger one is served as ${limits.max}. Digits only.`
            : `Page size, 1 to ${limits.max}; \`${limits.max + 1}\` or more is 400 \`limit_too_large\`. Digits only.`,
        schema:
          limits.overMax === 'clamp'
            ? { type: 'integer', minimum: 1, default: limits.default }
            : { type: 'integer', minimum: 1, maximum: limits.max, default: limits.default },
      },
      offset: {
        name: 'offset',
        in: 'query',
        description:
          limits.maxOffset === undefined
            ? 'Offset mode: items to skip. The response has `total`. Not with `cursor` (400 `conflicting_pagination`).'
            : `Offset mode: items to skip, at most ${limits.maxOffset} (more is 400 \`offset_too_large\`). The response has \`total\`. Not with \`cursor\` (400 \`conflicting_pagination\`).`,
        schema: limits.maxOffset === undefined ? { type: 'integer', minimum: 0 } : { type: 'integer', minimum: 0, maximum: limits.maxOffset },
      },
      cursor: {
        name: 'cursor',
        in: 'query',
        description: 'Cursor mode: the previous page\'s `nextCursor`, opaque and signed. Edited or foreign: 400 `invalid_cursor`.',
        schema: { type: 'string', maxLength: 2048 },
      },
      sort: {
        name: 'sort',
        in: 'query',
        description: 'Sort order, when the endpoint offers a choice; a cursor is bound to the sort it was issued for.',
        schema: sortValues === undefined ? { type: 'string' } : { type: 'string', enum: [...sortValues] },
      },
    },
    headers: {
      RateLimit: {
        description: 'Remaining quota of the key (draft-ietf-httpapi-ratelimit-headers), e.g. `"default";r=99;t=1`.',
        schema: { type: 'string' },
      },
      'RateLimit-Policy': {
        description: 'The key\'s rate-limit policy (draft-ietf-httpapi-ratelimit-headers), e.g. `"default";q=100;w=60`.',
        schema: { type: 'string' },
      },
      'Retry-After': { description: 'Seconds to wait before retrying (RFC 9110 §10.2.3).', schema: { type: 'integer', minimum: 0 } },
      Link: { description: 'RFC 8288 links to other pages: `<absolute-url>; rel="next"`.', schema: { type: 'string' } },
      'WWW-Authenticate': { description: `The schemes to use, one challenge each: ${schemes.map((scheme) => `\`${scheme} realm="…"\``).join(', ')}.`, schema: { type: 'string' } },
      Allow: { description: 'The methods this path supports (RFC 9110 §10.2.1).', schema: { type: 'string' } },
    },
    responses,
  };
}
