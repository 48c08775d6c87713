/**
 * Where a request carries its key: `Authorization: ApiKey <key>` by default, and, when the
 * keyring accepts them (`schemes`), `Authorization: Bearer <key>` and an `X-API-Key: <key>`
 * header. RFC 9110 §11.4: `credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`;
 * §11.1: the scheme is case-insensitive. A request without accepted credentials is told
 * apart from one that sent credentials in a form this API does not read (`Bearer` when
 * only `ApiKey` is accepted, an `X-API-Key` header): both are 401, but "Missing API key"
 * misleads a client that did send one (`credentialsRefusal`). A scheme is named back only
 * when it is a known scheme word (`echoAuthScheme`): a bare key sent as the whole header
 * value is never echoed.
 *
 * One `Authorization` per request (`singleAuthorization`). The field is not a list
 * (RFC 9110 §11.6.2, §5.3: a sender must not send it twice), yet Node keeps the first of
 * two and drops the second while `Headers` joins them with `, `: with an admin key first
 * and a user key second, Express and Fastify acted as the admin, Hono and Fetch refused.
 * Ambiguous credentials are refused on every adapter instead: 400 `invalid_request`
 * naming `authorization`.
 * @module
 */
import { AuthenticationError, ConfigError, KeysetError } from '../errors.ts';
import { echoAuthScheme } from '../redaction/redact-echo.ts';

/** What the header holds, for the keyring: no ApiKey credentials, or the key text. */
export type ApiKeyHeader = { kind: 'missing' } | { kind: 'key'; text: string };

const MISSING: ApiKeyHeader = Object.freeze({ kind: 'missing' });

/** RFC 9110 §5.6.2 `tchar`, by char code: the characters of an auth-scheme. */
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1;

/**
 * Where a key may come from: `ApiKey` and `Bearer` are `Authorization` schemes, `X-API-Key`
 * the header of that name.
 */
export type KeyScheme = 'ApiKey' | 'Bearer' | 'X-API-Key';

/** Every `KeyScheme`, in the order challenges and messages list them. */
export const KEY_SCHEMES: readonly KeyScheme[] = Object.freeze(['ApiKey', 'Bearer', 'X-API-Key'] as const);

/** The accepted schemes, resolved once per keyring. Internal. */
export interface AcceptedSchemes {
  readonly apiKey: boolean;
  readonly bearer: boolean;
  readonly xApiKey: boolean;
  /** The accepted schemes in `KEY_SCHEMES` order, for challenges and messages. */
  readonly list: readonly KeyScheme[];
}

/**
 * Validates a keyring's `schemes` option (a non-empty list of `KeyScheme`s, each once) and
 * resolves it. Throws `ConfigError` saying what to change.
 */
export function resolveSchemes(schemes: readonly KeyScheme[] = ['ApiKey']): AcceptedSchemes {
  const list = KEY_SCHEMES.filter((scheme) => Array.isArray(schemes) && schemes.includes(scheme));
  // Every entry known, none twice, at least one: the filtered list is as long as the given one.
  if (list.length === 0 || list.length !== schemes.length) {
    throw new ConfigError(`schemes must list one or more of 'ApiKey', 'Bearer', 'X-API-Key' (spelt so), each once, got ${JSON.stringify(schemes)}`);
  }
  return Object.freeze({ apiKey: list.includes('ApiKey'), bearer: list.includes('Bearer'), xApiKey: list.includes('X-API-Key'), list: Object.freeze(list) });
}

/** The default: `Authorization: ApiKey` only. */
export const API_KEY_ONLY: AcceptedSchemes = resolveSchemes();

/**
 * The text after `<scheme> 1*SP` in `value`, `scheme` given in lowercase (`apikey`,
 * `bearer`), or `undefined` when `value` holds no credentials of that scheme. Scans by
 * char code: no regular expression, no result object.
 */
function schemeText(value: string | null | undefined, scheme: string): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Leading OWS is stripped by HTTP parsers already; tolerate it when a caller did not.
  let start = 0;
  while (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9) start++;
  // The scheme is the longest run of tchar: exactly `scheme` in any case, then no tchar.
  // (`c | 0x20` maps only A-Z onto a-z among the characters that can equal a letter here.)
  const length = scheme.length;
  for (let k = 0; k < length; k++) if ((value.charCodeAt(start + k) | 0x20) !== scheme.charCodeAt(k)) return undefined;
  const after = value.charCodeAt(start + length);
  if (after < 128 && TCHAR[after] === 1) return undefined;
  let i = start + length;
  while (value.charCodeAt(i) === 32) i++;
  // No space after the scheme: `ApiKey`, `ApiKey\tk…`. The empty text is malformed downstream.
  if (i === start + length) return value.slice(i);
  // Trailing OWS dropped by a loop, not `/[ \t]+$/`: that regex backtracks quadratically
  // over a run of spaces that is not at the end, so one large header would hold the CPU
  // for as long as its length squared.
  let end = value.length;
  while (end > i && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return value.slice(i, end);
}

/**
 * The text after `ApiKey 1*SP` (see `readApiKeyHeader`), or `undefined` when `value` holds
 * no ApiKey credentials.
 */
export function apiKeyText(value: string | null | undefined): string | undefined {
  return schemeText(value, 'apikey');
}

/**
 * Reads the ApiKey credentials of an `Authorization` value. No header, an empty one or
 * another scheme (`Bearer`, `Basic`) → `missing` (401: `credentialsRefusal` says which
 * problem). The ApiKey
 * scheme in any case → the text after `1*SP`, with trailing spaces/tabs dropped (OWS
 * a proxy may leave); the keyring then checks it strictly, so `ApiKey` alone, a tab
 * instead of a space, or two tokens are `malformed` (401 `invalid_api_key`).
 */
export function readApiKeyHeader(value: string | null | undefined): ApiKeyHeader {
  const text = apiKeyText(value);
  return text === undefined ? MISSING : { kind: 'key', text };
}

/**
 * A list element that starts credentials: an auth-scheme alone, or followed by spaces and
 * something that is not `=` (token68 or the first auth-param). `realm="x"` or `a = b`
 * continue the credentials before them (RFC 9110 §11.4).
 */
const SCHEME_START = /^[ \t]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*$|[ \t]+[^=\s])/;

/** Elements of a comma-separated field value, commas inside quoted strings kept (RFC 9110 §5.6.1, §5.6.4). */
function listElements(value: string): string[] {
  const elements: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      elements.push(value.slice(start, i));
      start = i + 1;
    }
  }
  elements.push(value.slice(start));
  return elements;
}

/**
 * The one `Authorization` value of a request, from all its field values (every
 * `Authorization` line of Node's `req.rawHeaders`, or the value a `Headers` object joined), for the
 * guard to read; throws 400 `invalid_request` (`field: 'authorization'`) when they hold
 * more than one set of credentials, whichever they are. Values are joined with `, ` as
 * `Headers` joins them, so every adapter sees the same text.
 *
 * @example
 * ```ts
 * singleAuthorization(['ApiKey a']); // 'ApiKey a'
 * singleAuthorization('ApiKey a, ApiKey b'); // throws: two credentials
 * singleAuthorization('Digest realm="x", nonce="y"'); // one: auth-params continue it
 * ```
 */
export function singleAuthorization(values: string | readonly string[] | null | undefined): string | null | undefined {
  const value = typeof values === 'string' || values === null || values === undefined ? values : values.length === 1 ? values[0] : values.join(', ');
  // A key never holds a comma: the common case is one scan.
  if (typeof value !== 'string' || !value.includes(',')) return value;
  let schemes = 0;
  for (const element of listElements(value)) if (SCHEME_START.test(element)) schemes++;
  if (schemes < 2) return value;
  throw new KeysetError('invalid_request', {
    detail: 'The request carries more than one set of credentials: send one Authorization header with one API key.',
    extensions: { field: 'authorization' },
  });
}

/** How the key is sent, in each accepted form, for messages: "`Authorization: ApiKey <key>` or `X-API-Key: <key>`". */
function acceptedForms(schemes: AcceptedSchemes): string {
  return schemes.list.map((scheme) => (scheme === 'X-API-Key' ? '`X-API-Key: <key>`' : `\`Authorization: ${scheme} <key>\``)).join(' or ');
}

/** Whether an `X-API-Key` header (one value, or all of them) holds anything. */
function hasText(value: string | readonly string[] | null | undefined): boolean {
  return typeof value === 'string' ? value.trim() !== '' : Array.isArray(value) && value.some((v) => typeof v === 'string' && v.trim() !== '');
}

function twoCredentials(): KeysetError {
  return new KeysetError('invalid_request', {
    detail: 'The request carries more than one set of credentials: send one API key, in one place.',
    extensions: { field: 'authorization' },
  });
}

/**
 * The key text of a request, from the places `schemes` accepts, or the error to throw:
 * 401 (`credentialsRefusal`) when none holds accepted credentials, 400 `invalid_request`
 * when the `X-API-Key` header is accepted and the request carries it more than once or
 * together with an `Authorization` header (two sets of credentials: which one is meant is
 * not for the server to guess). `authorization` is the one value of the header
 * (`singleAuthorization`).
 *
 * @example
 * ```ts
 * readCredentials('Bearer k', undefined, resolveSchemes(['ApiKey', 'Bearer']), 'api'); // 'k'
 * ```
 */
export function readCredentials(
  authorization: string | null | undefined,
  xApiKey: string | readonly string[] | null | undefined,
  schemes: AcceptedSchemes,
  realm: string,
): string {
  let text = schemes.apiKey ? schemeText(authorization, 'apikey') : undefined;
  if (text === undefined && schemes.bearer) text = schemeText(authorization, 'bearer');
  if (schemes.xApiKey && hasText(xApiKey)) {
    const values = typeof xApiKey === 'string' ? [xApiKey] : (xApiKey as readonly string[]).filter((v) => typeof v === 'string' && v.trim() !== '');
    // A key holds no comma: one there is two values joined (`Headers` joins them with `, `).
    if (values.length > 1 || (values[0] as string).includes(',')) throw twoCredentials();
    if (typeof authorization === 'string' && authorization.trim() !== '') throw twoCredentials();
    return (values[0] as string).trim();
  }
  if (text !== undefined) return text;
  throw credentialsRefusal(authorization, xApiKey, realm, schemes);
}

/**
 * The 401 for a request without accepted credentials: credentials in another form get
 * `unsupported_auth_scheme`, saying what was sent (a known scheme's name, never other
 * text) and where the key goes; none at all get `missing_api_key`. `authorization` is the
 * one value of the header (`singleAuthorization`); `xApiKey` the `X-API-Key` header when
 * the adapter passed it. Every answer carries a challenge per accepted scheme.
 *
 * @example
 * ```ts
 * credentialsRefusal('Bearer abc', undefined, 'api').code; // 'unsupported_auth_scheme'
 * credentialsRefusal(undefined, undefined, 'api').code; // 'missing_api_key'
 * ```
 */
export function credentialsRefusal(
  authorization: string | null | undefined,
  xApiKey: string | readonly string[] | null | undefined,
  realm: string,
  schemes: AcceptedSchemes = API_KEY_ONLY,
): AuthenticationError {
  const challenge = { realm, schemes: schemes.list };
  const forms = acceptedForms(schemes);
  const sent = typeof authorization === 'string' ? authorization.trim() : '';
  if (sent !== '') {
    const scheme = echoAuthScheme(sent.split(/[ \t]/, 1)[0]);
    const what = scheme !== undefined ? `uses the \`${scheme}\` scheme` : 'uses an unsupported scheme';
    return new AuthenticationError('unsupported_auth_scheme', { ...challenge, detail: `The Authorization header ${what}: send the API key as ${forms}.` });
  }
  if (hasText(xApiKey)) {
    return new AuthenticationError('unsupported_auth_scheme', { ...challenge, detail: `The X-API-Key header is not read: send the API key as ${forms}.` });
  }
  // The default keeps the catalogue's own detail.
  return schemes.list.length === 1 && schemes.apiKey
    ? new AuthenticationError('missing_api_key', challenge)
    : new AuthenticationError('missing_api_key', { ...challenge, detail: `Send the API key as ${forms}.` });
}
