/**
 * `Authorization: ApiKey <key>` (DESIGN §3). RFC 9110 §11.4: `credentials = auth-scheme
 * [ 1*SP ( token68 / #auth-param ) ]`; §11.1: the scheme is case-insensitive.
 * @module
 */

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
 * another scheme (`Bearer`, `Basic`) → `missing` (401 `missing_api_key`). The ApiKey
 * scheme in any case → the text after `1*SP`, with trailing spaces/tabs dropped (OWS
 * a proxy may leave); the keyring then checks it strictly, so `ApiKey` alone, a tab
 * instead of a space, or two tokens are `malformed` (401 `invalid_api_key`).
 */
export function readApiKeyHeader(value: string | null | undefined): ApiKeyHeader {
  const text = apiKeyText(value);
  return text === undefined ? MISSING : { kind: 'key', text };
}
