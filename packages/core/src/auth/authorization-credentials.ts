/**
 * One `Authorization` per request. The field is not a list (RFC 9110 §11.6.2, §5.3: a
 * sender must not send it twice), yet Node keeps the first of two and drops the second
 * while `Headers` joins them with `, `: with an admin key first and a user key second,
 * Express and Fastify acted as the admin, Hono and Fetch refused. Ambiguous credentials
 * are refused on every adapter instead: 400 `invalid_request` naming `authorization`.
 * @module
 */
import { KeysetError } from '../errors.ts';

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
