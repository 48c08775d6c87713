/**
 * The request-path policy every adapter applies before routing answers: a path that is
 * not valid percent-encoded UTF-8, or that holds a dot segment, is 400 `invalid_request`
 * (`field: 'path'`) whatever the framework. Frameworks disagree here (Fastify's router and
 * Express's `:param` decoding refuse a bad encoding, Hono and `Request` URLs keep it; the
 * WHATWG URL resolves `/a/../b` where Express and Fastify match it as sent), so adapters
 * hand the path over and this decides.
 * @module
 */
import { KeysetError } from './errors.ts';

/** `.` or `..`, also percent-encoded (`%2e`, `.%2E`…), as the WHATWG URL reads them. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The error for a request path (or target: the query and fragment are ignored) that no
 * route should see, or `undefined` when it is fine:
 * - a `%` not followed by two hex digits, or escapes that are not UTF-8 (RFC 3986 §2.1,
 *   §2.5): it names no resource on any adapter, and is a malformed request (RFC 9112 §3.2);
 * - a `.` or `..` segment (RFC 3986 §5.2.4): clients remove them before sending, so one
 *   on the wire is hand-made, and resolving it on the server could reach a path that a
 *   proxy in front matched differently.
 * Pass the path as it came off the wire where the runtime has it (on Node, the request
 * line): a `Request` URL has its dot segments resolved already.
 *
 * @example
 * ```ts
 * requestPathError('/api/orders%ZZ')?.status; // 400
 * requestPathError('/api/keys/../orders')?.extensions.field; // 'path'
 * requestPathError('/api/keys/key_1?x=%ZZ'); // undefined: the query is not the path
 * ```
 */
export function requestPathError(target: string): KeysetError | undefined {
  const end = target.search(/[?#]/);
  const path = end === -1 ? target : target.slice(0, end);
  // Most paths have neither a `%` nor a `.` right after a `/`: two scans and done.
  const percent = path.includes('%');
  if (!percent && !path.includes('/.')) return undefined;
  if (percent) {
    try {
      decodeURIComponent(path);
    } catch {
      return new KeysetError('invalid_request', {
        detail: 'The request path is not valid percent-encoded UTF-8.',
        extensions: { field: 'path' },
      });
    }
  }
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment)) {
      return new KeysetError('invalid_request', {
        detail: 'The request path has a `.` or `..` segment: send the path it stands for.',
        extensions: { field: 'path' },
      });
    }
  }
  return undefined;
}
