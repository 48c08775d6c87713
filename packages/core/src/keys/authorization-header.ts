/**
 * `Authorization: ApiKey <key>` (DESIGN §3). RFC 9110 §11.4: `credentials = auth-scheme
 * [ 1*SP ( token68 / #auth-param ) ]`; §11.1: the scheme is case-insensitive. A request
 * without ApiKey credentials is told apart from one that sent credentials keyset does not
 * read (`Authorization: Bearer <key>`, an `X-API-Key` header): both are 401, but "Missing
 * API key" misleads a client that did send one (`credentialsRefusal`).
 * @module
 */
import { AuthenticationError } from '../errors.ts';

/** What the header holds, for the keyring: no ApiKey credentials, or the key text. */
export type ApiKeyHeader = { kind: 'missing' } | { kind: 'key'; text: string };

const MISSING: ApiKeyHeader = Object.freeze({ kind: 'missing' });

/** RFC 9110 §5.6.2 `tchar`, by char code: the characters of an auth-scheme. */
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1;

/** `apikey`, lowercase: a header character `c` matches when `c | 0x20` equals it (letters only do). */
const SCHEME = 'apikey';

/**
 * The text after `ApiKey 1*SP` (see `readApiKeyHeader`), or `undefined` when `value` holds
 * no ApiKey credentials. Scans by char code: no regular expression, no result object.
 */
export function apiKeyText(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Leading OWS is stripped by HTTP parsers already; tolerate it when a caller did not.
  let start = 0;
  while (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9) start++;
  // The scheme is the longest run of tchar: exactly `apikey` in any case, then no tchar.
  // (`c | 0x20` maps only A-Z onto a-z among the characters that can equal a letter here.)
  for (let k = 0; k < 6; k++) if ((value.charCodeAt(start + k) | 0x20) !== SCHEME.charCodeAt(k)) return undefined;
  const after = value.charCodeAt(start + 6);
  if (after < 128 && TCHAR[after] === 1) return undefined;
  let i = start + 6;
  while (value.charCodeAt(i) === 32) i++;
  // No space after the scheme: `ApiKey`, `ApiKey\tk…`. The empty text is malformed downstream.
  if (i === start + 6) return value.slice(i);
  // Trailing OWS dropped by a loop, not `/[ \t]+$/`: that regex backtracks quadratically
  // over a run of spaces that is not at the end (16 KB of them cost ~100 ms per request).
  let end = value.length;
  while (end > i && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return value.slice(i, end);
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

/** A scheme named back to the client: a short word (`Bearer`, `Basic`, `Token`), never a bare key. */
const NAMEABLE_SCHEME = /^[A-Za-z][A-Za-z0-9-]{0,19}$/;

/**
 * The 401 for a request without ApiKey credentials (`apiKeyText` found none): credentials
 * in another form get `unsupported_auth_scheme`, saying what was sent and where the key
 * goes; none at all get `missing_api_key`. `authorization` is the one value of the header
 * (`singleAuthorization`); `xApiKey` the `X-API-Key` header when the adapter passed it.
 * Only a short scheme word is quoted: a bare key sent as `Authorization: <key>` is not echoed.
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
): AuthenticationError {
  const sent = typeof authorization === 'string' ? authorization.trim() : '';
  if (sent !== '') {
    const scheme = sent.split(/[ \t]/, 1)[0] as string;
    const what = NAMEABLE_SCHEME.test(scheme) ? `uses the \`${scheme}\` scheme` : 'holds no `ApiKey` credentials';
    return new AuthenticationError('unsupported_auth_scheme', {
      realm,
      detail: `The Authorization header ${what}: send the API key as \`Authorization: ApiKey <key>\`.`,
    });
  }
  if (typeof xApiKey === 'string' ? xApiKey.trim() !== '' : Array.isArray(xApiKey) && xApiKey.some((v) => typeof v === 'string' && v.trim() !== '')) {
    return new AuthenticationError('unsupported_auth_scheme', {
      realm,
      detail: 'The X-API-Key header is not read: send the API key as `Authorization: ApiKey <key>`.',
    });
  }
  return new AuthenticationError('missing_api_key', { realm });
}
