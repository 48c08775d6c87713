/**
 * Credentials in the URL: a key in a query string ends up in access logs, proxies,
 * browser history and `Referer` headers, so it is refused outright, and
 * `redactUrl` scrubs URLs before anything logs them.
 * @module
 */
import { KEY_CHECKSUM_LENGTH, KEY_OK, KEY_RANDOM_LENGTH, checkKey } from '../keys/key-format.ts';
import { redactKey } from '../redaction/redact-key.ts';
import { redactEncodedText } from '../redaction/redact-text.ts';
import { queryStringOf } from '../pagination/page-query.ts';

/**
 * Query parameter names that carry credentials (compared case-insensitively). `key` is
 * deliberately absent: too many APIs use it for ordinary values.
 */
export const CREDENTIAL_QUERY_PARAMS: readonly string[] = Object.freeze(['api_key', 'apikey', 'api-key', 'access_token']);
const CREDENTIAL_NAMES = new Set(CREDENTIAL_QUERY_PARAMS);

/**
 * The credential name `name` (already percent-decoded) stands for, if any: compared
 * case-insensitively, and with a bracket suffix dropped, since qs (Express's `extended`
 * parser), PHP and Rails read `api_key[]=…` or `api_key[0]=…` as `api_key`.
 */
function credentialName(name: string): string | undefined {
  const lower = name.toLowerCase();
  const bracket = lower.indexOf('[');
  const base = bracket > 0 ? lower.slice(0, bracket) : lower;
  return CREDENTIAL_NAMES.has(base) ? base : undefined;
}

/**
 * Parameter separators: `&`, and `;`, which HTML 4 (RFC 1866 §8.2.1) recommends and
 * many servers, proxies and log parsers still split on. Counting `;` can only make the
 * check stricter: a key never contains one.
 */
const SEPARATORS = /[&;]/g;

const BODY = KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;

/** What `findQueryCredential` found: a credential-named parameter, or a valid key anywhere. */
export type QueryCredential = { kind: 'named'; name: string } | { kind: 'key' };

/**
 * Whether a parameter name of the raw (not percent-encoded) `query` is a credential name,
 * as `credentialName` reads it: the name before `=`, without a bracket suffix, in any case.
 */
function hasCredentialName(query: string): boolean {
  // Segment ends found with indexOf (native, fast over a long cursor value), not per character.
  let amp = query.indexOf('&');
  let semi = query.indexOf(';');
  let start = 0;
  while (start <= query.length) {
    if (amp >= 0 && amp < start) amp = query.indexOf('&', start);
    if (semi >= 0 && semi < start) semi = query.indexOf(';', start);
    const end = amp < 0 ? (semi < 0 ? query.length : semi) : semi < 0 || amp < semi ? amp : semi;
    const eq = query.indexOf('=', start);
    const nameEnd = eq < 0 || eq > end ? end : eq;
    const bracket = query.indexOf('[', start);
    const baseEnd = bracket > start && bracket < nameEnd ? bracket : nameEnd;
    const length = baseEnd - start;
    // The credential names are 6 (apikey), 7 (api_key, api-key) or 12 (access_token) long
    // and all start with `a` (only `a` and `A` lowercase to it; `c | 0x20` maps just those
    // two onto 97): `cursor` or `status`, 6 long, are passed without a slice and a lowercase.
    if ((length === 6 || length === 7 || length === 12) && (query.charCodeAt(start) | 0x20) === 97 && CREDENTIAL_NAMES.has(query.slice(start, baseEnd).toLowerCase())) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

/** Whether `text` contains a key of `prefix` with a valid checksum, anywhere inside it. */
function containsKey(text: string, prefix: string): boolean {
  const marker = `${prefix}_`;
  const length = marker.length + BODY;
  for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + 1)) {
    if (at + length <= text.length && checkKey(text.slice(at, at + length), prefix) === KEY_OK) return true;
  }
  return false;
}

/**
 * Looks for credentials in the query string of `url`: a parameter named like one
 * (`api_key`, `apikey`, `api-key`, `access_token`, any case) or a name or value that
 * holds a valid key of one of `prefixes` (checksum included, so ordinary values never
 * match). Values are percent-decoded first, so encoding a key does not hide it.
 */
export function findQueryCredential(url: string, prefixes: string | readonly string[]): QueryCredential | undefined {
  return createQueryCredentialFinder(typeof prefixes === 'string' ? [prefixes] : prefixes)(url);
}

/**
 * `findQueryCredential` for fixed `prefixes`, with the `<prefix>_` markers built once (the
 * keyring's request path). Internal: not exported from the package.
 */
export function createQueryCredentialFinder(prefixes: readonly string[]): (url: string) => QueryCredential | undefined {
  const all = [...prefixes];
  const markers = all.map((prefix) => `${prefix}_`);
  const hasMarker = (query: string): boolean => {
    for (let i = 0; i < markers.length; i++) if (query.indexOf(markers[i] as string) >= 0) return true;
    return false;
  };
  return (url) => {
    const query = queryStringOf(url);
    if (query === '') return undefined;
    // Fast path for the common request: nothing encoded, no `prefix_`, and no parameter
    // named like a credential. Only the names are looked at (and lowercased), never the
    // values: a cursor is long and can hold no credential name that matters here.
    if (query.indexOf('%') < 0 && !hasMarker(query) && !hasCredentialName(query)) return undefined;
    for (const [name, value] of new URLSearchParams(query.replace(SEPARATORS, '&'))) {
      const credential = credentialName(name);
      if (credential !== undefined) return { kind: 'named', name: credential };
      if (all.some((prefix) => containsKey(value, prefix) || containsKey(name, prefix))) return { kind: 'key' };
    }
    return undefined;
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** Lone UTF-16 surrogates, which `encodeURIComponent` refuses with a `URIError`. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Redacted form for a URL: `…` stays literal for readability, the last 4 are re-encoded.
 * Never throws: `redactUrl` runs in request loggers on whatever a client sent.
 */
function redactForUrl(text: string): string {
  const redacted = redactKey(text).slice(1);
  return `…${encodeURIComponent(redacted.replace(LONE_SURROGATE, '\uFFFD'))}`;
}

/**
 * `url` with credentials replaced by their redacted form (`…abcd`), for loggers: the
 * values of credential-named query parameters, and anything shaped like a key
 * (`<prefix>_` + 38 base62 characters, any prefix) in the path, query or fragment.
 * Everything else is left byte for byte. Not for re-sending: `…` is left unencoded.
 *
 * @example
 * ```ts
 * redactUrl('/api/orders?api_key=hunter2hunter2hunter2&limit=5'); // '/api/orders?api_key=…ter2&limit=5'
 * ```
 */
export function redactUrl(url: string | URL): string {
  const text = String(url);
  const q = text.indexOf('?');
  const hashAt = text.indexOf('#', q < 0 ? 0 : q);
  const end = hashAt < 0 ? text.length : hashAt;
  const path = q < 0 ? text.slice(0, end) : text.slice(0, q);
  const fragment = hashAt < 0 ? '' : text.slice(hashAt);
  let out = path.split('/').map(redactEncodedText).join('/');
  if (q >= 0) {
    // Split on `&` and `;` alike (see SEPARATORS), keeping each separator as it was.
    const pairs = text.slice(q + 1, end).split(/([&;])/).map((pair, index) => {
      if (index % 2 === 1) return pair;
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      const name = safeDecode(rawName);
      if (credentialName(name) !== undefined) {
        return eq < 0 ? pair : `${rawName}=${redactForUrl(safeDecode(pair.slice(eq + 1)))}`;
      }
      return eq < 0 ? redactEncodedText(pair) : `${redactEncodedText(rawName)}=${redactEncodedText(pair.slice(eq + 1))}`;
    });
    out += `?${pairs.join('')}`;
  }
  return out + redactEncodedText(fragment);
}
