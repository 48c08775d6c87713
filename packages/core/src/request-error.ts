/**
 * The request-level policy every adapter's `checkRequest()` applies before routing, on
 * every route: one answer per malformed request, whatever the framework would have done
 * (left to themselves, Express and Fastify check the Host only where a `Link` is built,
 * and Fastify answers an empty `Content-Type` with 415 where the others take it). Each
 * refusal is 400 `invalid_request` naming the `field` (`path`, `host`, `content-type`).
 *
 * The request target (`requestPathError`, RFC 9112 §3.2, RFC 3986). Frameworks disagree
 * on what they accept and how they match it: Fastify's router and Hono decode `%61` to `a`
 * before matching, Express and `Request` URLs do not; the WHATWG URL turns `\` into `/`
 * and resolves `/a/../b`, Express and Fastify match them as sent; `@hono/node-server`
 * refuses `*` where Express answers 404. A proxy rule written for the raw path (`deny
 * /api/keys`) is bypassed wherever a server matches something else than what the proxy saw.
 * So every target that two servers could read differently is refused here, the same way on
 * every adapter: 400 `invalid_request`, `field: 'path'`. Adapters hand over the target as
 * it came off the wire and this decides; a problem's `instance` is that target's path
 * (`requestInstance`).
 * @module
 */
import { KeysetError } from './errors.ts';
import { isValidHost } from './pagination/page-links.ts';

/** What `requestError()` looks at, as the request carried it. */
export interface RequestFacts {
  /** The request target as sent (Node: the request line's; elsewhere the URL's path and query). */
  target: string;
  /** The `Host` header (RFC 9110 §7.2), or the URL's host where the runtime keeps no header. */
  host: string | null | undefined;
  /** The `Content-Type` header, `null`/`undefined` when there is none. */
  contentType: string | null | undefined;
}

/**
 * RFC 9110 §8.3.1 `media-type`: `type/subtype *( OWS ";" OWS [ parameter ] )`, values as
 * token or quoted-string. Built by a call marked pure, so that a bundle using only the path
 * rule (`requestInstance`) leaves it out.
 */
const MEDIA_TYPE = /* @__PURE__ */ mediaTypePattern();

function mediaTypePattern(): RegExp {
  /** RFC 9110 §5.6.2 `token`. */
  const token = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
  return new RegExp(`^${token}/${token}(?:[ \\t]*;(?:[ \\t]*${token}=(?:${token}|"(?:[^"\\\\]|\\\\.)*"))?)*[ \\t]*$`);
}

/**
 * The error for a `Host` that names no host, or `undefined` when it is fine: absent or
 * empty (RFC 9112 §3.2: a server must refuse an HTTP/1.1 request without one), or
 * anything `isValidHost` refuses (not a DNS name, IPv4 or bracketed IPv6 address with an
 * optional port up to 65535, too long, or key-shaped). One Host rule for `checkRequest()`
 * and for `Link` origins; the problem never quotes the header.
 *
 * @example
 * ```ts
 * hostError('api.example.com:8443'); // undefined
 * hostError('a/b')?.extensions.field; // 'host'
 * ```
 */
export function hostError(host: string | null | undefined): KeysetError | undefined {
  if (isValidHost(host)) return undefined;
  return new KeysetError('invalid_request', {
    detail: host === undefined || host === null || host === '' ? 'The request has no Host header.' : 'The Host header is not a valid host name (a DNS name, an IPv4 address or a bracketed IPv6 literal, and an optional port).',
    extensions: { field: 'host' },
  });
}

/**
 * The error for a `Content-Type` that is present but no media type (empty, blank, `json`),
 * or `undefined` (none at all is fine: a request without a body has none). RFC 9110 §8.3.
 *
 * @example
 * ```ts
 * contentTypeError('application/json; charset=utf-8'); // undefined
 * contentTypeError('')?.status; // 400
 * ```
 */
export function contentTypeError(contentType: string | null | undefined): KeysetError | undefined {
  if (contentType === undefined || contentType === null || MEDIA_TYPE.test(contentType)) return undefined;
  return new KeysetError('invalid_request', {
    detail: 'The Content-Type header is not a media type such as `application/json`: send one, or no Content-Type at all.',
    extensions: { field: 'content-type' },
  });
}

/**
 * The first refusal of a request before routing, or `undefined`: the target
 * (`requestPathError`), then the Host (`hostError`; in an absolute-form target its
 * authority stands for it, RFC 9112 §3.2.2), then the Content-Type (`contentTypeError`).
 *
 * @example
 * ```ts
 * const error = requestError({ target: req.url, host: req.headers.host, contentType: req.headers['content-type'] });
 * if (error !== undefined) throw error; // 400 invalid_request, `field` names the part
 * ```
 */
export function requestError(request: RequestFacts): KeysetError | undefined {
  const { target, host, contentType } = request;
  const path = requestPathError(target);
  if (path !== undefined) return path;
  const authority = target.startsWith('/') ? host : /^https?:\/\/([^/?#]*)/i.exec(target)?.[1];
  return hostError(authority) ?? contentTypeError(contentType);
}

/** `.` or `..`, also percent-encoded (`%2e`, `.%2E`…), as the WHATWG URL reads them. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** RFC 3986 §3.3 path characters: `pchar` (unreserved, `%`, sub-delims, `:`, `@`) and `/`. */
const PATH_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;

/** An escape of an unreserved character (RFC 3986 §2.3: ALPHA, DIGIT, `-`, `.`, `_`, `~`). */
const UNRESERVED_ESCAPE = /%(?:3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2[DE]|5F|7E)/i;

/** An absolute-form target (RFC 9112 §3.2.2), which servers must accept: its authority and the rest. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)/i;

const invalid = (detail: string): KeysetError => new KeysetError('invalid_request', { detail, extensions: { field: 'path' } });

/**
 * The path of a request target (origin-form `/a?b`, or absolute-form `http://h/a?b`),
 * without the query and fragment, or `undefined` for any other form (`*`, `a`, `\a`).
 */
export function targetPath(target: string): string | undefined {
  let rest = target;
  if (!target.startsWith('/')) {
    const absolute = ABSOLUTE_FORM.exec(target);
    if (absolute === null) return undefined;
    rest = absolute[2] === '' ? '/' : (absolute[2] as string);
    if (!rest.startsWith('/') && !rest.startsWith('?')) return undefined;
    if (rest.startsWith('?')) rest = `/${rest}`;
  }
  const end = rest.search(/[?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/**
 * The error for a request target that no route should see, or `undefined` when it is fine
 * (the query and fragment are not looked at: they are the parameters' business):
 * - not a path (`*`, `x`, `\api`): only origin- and absolute-form name a resource here;
 * - a character that a URI path cannot hold (RFC 3986 §3.3), such as `\`, `"` or a space;
 * - a `%` not followed by two hex digits, or escapes that are not UTF-8 (RFC 3986 §2.1, §2.5);
 * - a `.` or `..` segment (RFC 3986 §5.2.4): clients remove them before sending;
 * - an escaped unreserved character (`%61` for `a`, RFC 3986 §2.3): URI producers never
 *   escape them (`encodeURIComponent` does not), and some routers decode them, others not.
 * Pass the target as it came off the wire where the runtime has it (on Node, the request
 * line): a `Request` URL has its dot segments resolved and `\` turned into `/` already.
 *
 * @example
 * ```ts
 * requestPathError('/api/orders%ZZ')?.status; // 400
 * requestPathError('/%61pi/keys')?.extensions.field; // 'path'
 * requestPathError('/api/keys/key_1?x=%ZZ'); // undefined: the query is not the path
 * ```
 */
export function requestPathError(target: string): KeysetError | undefined {
  const path = targetPath(target);
  if (path === undefined) return invalid('The request target is not a path: send an origin-form target such as `/items`.');
  if (!PATH_CHARACTERS.test(path)) return invalid('The request path holds a character that a URI cannot hold, such as `\\`: percent-encode it.');
  // Most paths have neither a `%` nor a `.` right after a `/`: two scans and done.
  const percent = path.includes('%');
  if (!percent && !path.includes('/.')) return undefined;
  if (percent) {
    try {
      decodeURIComponent(path);
    } catch {
      return invalid('The request path is not valid percent-encoded UTF-8.');
    }
  }
  for (const segment of path.split('/')) {
    if (DOT_SEGMENT.test(segment)) return invalid('The request path has a `.` or `..` segment: send the path it stands for.');
  }
  if (percent && UNRESERVED_ESCAPE.test(path)) {
    return invalid('The request path percent-encodes a letter, digit or one of `-._~`, which never need it: send them as they are.');
  }
  return undefined;
}

/** Characters of a path that an `instance` (a URI reference) cannot hold as they are. */
const NOT_URI = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%?#[\]]/gu;

/**
 * The problem `instance` for a request target: its path as the client sent it, without the
 * query (which may hold credentials), characters a URI cannot hold percent-encoded. A
 * target that is no path (`*`) is its own instance.
 *
 * @example
 * ```ts
 * requestInstance('/items?limit=0&note=secret'); // '/items'
 * requestInstance('/api\\orders'); // '/api%5Corders'
 * ```
 */
export function requestInstance(target: string): string {
  const path = targetPath(target) ?? target.split(/[?#]/, 1)[0]!;
  return path.replace(NOT_URI, (c) => (c.length === 1 && c >= '\uD800' && c <= '\uDFFF' ? '%EF%BF%BD' : encodeURIComponent(c)));
}
