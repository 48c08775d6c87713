/**
 * `Authorization: ApiKey <key>` (DESIGN §3). RFC 9110 §11.4: `credentials = auth-scheme
 * [ 1*SP ( token68 / #auth-param ) ]`; §11.1: the scheme is case-insensitive.
 * @module
 */

/** What the header holds, for the keyring: no ApiKey credentials, or the key text. */
export type ApiKeyHeader = { kind: 'missing' } | { kind: 'key'; text: string };

const MISSING: ApiKeyHeader = Object.freeze({ kind: 'missing' });
/** RFC 9110 §5.6.2 `token`: the auth-scheme. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Reads the ApiKey credentials of an `Authorization` value. No header, an empty one or
 * another scheme (`Bearer`, `Basic`) → `missing` (401 `missing_api_key`). The ApiKey
 * scheme in any case → the text after `1*SP`, with trailing spaces/tabs dropped (OWS
 * a proxy may leave); the keyring then checks it strictly, so `ApiKey` alone, a tab
 * instead of a space, or two tokens are `malformed` (401 `invalid_api_key`).
 */
export function readApiKeyHeader(value: string | null | undefined): ApiKeyHeader {
  if (typeof value !== 'string') return MISSING;
  // Leading OWS is stripped by HTTP parsers already; tolerate it when a caller did not.
  const header = value.replace(/^[ \t]+/, '');
  const scheme = SCHEME.exec(header)?.[0];
  if (scheme === undefined || scheme.length !== 6 || scheme.toLowerCase() !== 'apikey') return MISSING;
  let i = 6;
  while (header.charCodeAt(i) === 32) i++;
  // No space after the scheme: `ApiKey`, `ApiKey\tk…`. The empty text is malformed downstream.
  if (i === 6) return { kind: 'key', text: header.slice(6) };
  // Trailing OWS dropped by a loop, not `/[ \t]+$/`: that regex backtracks quadratically
  // over a run of spaces that is not at the end (16 KB of them cost ~100 ms per request).
  let end = header.length;
  while (end > i && (header.charCodeAt(end - 1) === 32 || header.charCodeAt(end - 1) === 9)) end--;
  return { kind: 'key', text: header.slice(i, end) };
}
