/**
 * Helpers for one operation of a keyset API: the responses and parameters a paginated,
 * key-protected endpoint has, with references into `keysetComponents()`.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { KeyScheme } from '@keyset/core';
import { ERROR_RESPONSES, SECURITY_SCHEME_NAMES, checkedSchemes } from './components.ts';
import type { JsonObject } from './json.ts';

const ref = (kind: string, name: string): JsonObject => ({ $ref: `#/components/${kind}/${name}` });

/** Options of `pageResponses()`. */
export interface PageResponsesOptions {
  /**
   * The page modes the endpoint serves.
   * @default ['cursor', 'offset']
   */
  modes?: readonly ('cursor' | 'offset')[];
  /**
   * Whether the endpoint takes a key (adds 401, 403, 429 and the RateLimit headers).
   * @default true
   */
  authenticated?: boolean;
}

/** Every name `PageResponsesOptions` knows, checked on each call. */
const PAGE_RESPONSES_OPTIONS = { modes: true, authenticated: true } as const satisfies KnownOptions<PageResponsesOptions>;

/** Every name `pageParameters`' options know, checked on each call. */
const PAGE_PARAMETERS_OPTIONS = { modes: true, sort: true } as const satisfies KnownOptions<NonNullable<Parameters<typeof pageParameters>[0]>>;

/** References to the error responses, by status, for an operation's `responses`. */
export function errorResponses(statuses: readonly number[]): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const status of statuses) {
    const name = ERROR_RESPONSES[status];
    if (name === undefined) throw new TypeError(`keyset defines no error response for status ${status}`);
    out[String(status)] = ref('responses', name);
  }
  return out;
}

/**
 * The `responses` of a paginated endpoint: 200 with the page envelope of `item` (and
 * `Link`, RateLimit headers), and the error responses it can give.
 *
 * @example
 * ```ts
 * const responses = pageResponses({ $ref: '#/components/schemas/Order' });
 * ```
 */
export function pageResponses(item: JsonObject, options: PageResponsesOptions = {}): Record<string, JsonObject> {
  assertKnownOptions('pageResponses', options, PAGE_RESPONSES_OPTIONS);
  const { modes = ['cursor', 'offset'], authenticated = true } = options;
  if (modes.length === 0) throw new TypeError('modes must name at least one page mode');
  const envelope = (mode: 'cursor' | 'offset'): JsonObject => ({
    allOf: [ref('schemas', mode === 'cursor' ? 'CursorPage' : 'OffsetPage'), { type: 'object', properties: { items: { type: 'array', items: item } } }],
  });
  const headers: Record<string, JsonObject> = { Link: ref('headers', 'Link') };
  if (authenticated) {
    headers.RateLimit = ref('headers', 'RateLimit');
    headers['RateLimit-Policy'] = ref('headers', 'RateLimit-Policy');
  }
  return {
    '200': {
      description: modes.length === 2 ? 'A page: `{ items, nextCursor }`, or `{ items, total }` with `offset`.' : `A page (${modes[0]} mode).`,
      headers,
      content: { 'application/json': { schema: modes.length === 1 ? envelope(modes[0]!) : { oneOf: modes.map(envelope) } } },
    },
    ...errorResponses(authenticated ? [400, 401, 403, 429, 503] : [400, 503]),
  };
}

/**
 * The query parameters of a paginated endpoint, as references: `limit`, then `cursor`
 * and/or `offset`, and `sort` when asked for.
 *
 * @example
 * ```ts
 * const parameters = pageParameters({ modes: ['cursor'] }); // limit, cursor
 * ```
 */
export function pageParameters(options: { modes?: readonly ('cursor' | 'offset')[]; sort?: boolean } = {}): JsonObject[] {
  assertKnownOptions('pageParameters', options, PAGE_PARAMETERS_OPTIONS);
  const { modes = ['cursor', 'offset'], sort = false } = options;
  return [
    ref('parameters', 'limit'),
    ...(modes.includes('cursor') ? [ref('parameters', 'cursor')] : []),
    ...(modes.includes('offset') ? [ref('parameters', 'offset')] : []),
    ...(sort ? [ref('parameters', 'sort')] : []),
  ];
}

/** The `security` requirement of a key-protected operation (or document), `ApiKey` only. */
export const apiKeySecurity: readonly JsonObject[] = Object.freeze([{ ApiKey: [] }]);

/**
 * The `security` requirement of a key-protected operation when the keyring reads keys from
 * `schemes`: any one of them (OpenAPI lists alternatives). Pass the list given to
 * `keysetComponents({ schemes })`.
 *
 * @example
 * ```ts
 * keySecurity(['ApiKey', 'Bearer']); // [{ ApiKey: [] }, { Bearer: [] }]
 * ```
 */
export function keySecurity(schemes: readonly KeyScheme[] = ['ApiKey']): JsonObject[] {
  return checkedSchemes(schemes).map((scheme) => ({ [SECURITY_SCHEME_NAMES[scheme]]: [] }));
}
