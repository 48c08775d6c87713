/**
 * The request-level policy every adapter's `checkRequest()` applies before routing, on
 * every route: one answer per malformed request, whatever the framework would have done
 * (left to themselves, Express and Fastify check the Host only where a `Link` is built,
 * and Fastify answers an empty `Content-Type` with 415 where the others take it). Each refusal is 400
 * `invalid_request` naming the `field` (`path`, `host`, `content-type`).
 * @module
 */
import { KeysetError } from './errors.ts';
import { isValidHost } from './pagination/page-links.ts';
import { requestPathError } from './request-path.ts';

/** What `requestError()` looks at, as the request carried it. */
export interface RequestFacts {
  /** The request target as sent (Node: the request line's; elsewhere the URL's path and query). */
  target: string;
  /** The `Host` header (RFC 9110 §7.2), or the URL's host where the runtime keeps no header. */
  host: string | null | undefined;
  /** The `Content-Type` header, `null`/`undefined` when there is none. */
  contentType: string | null | undefined;
}

/** RFC 9110 §5.6.2 `token`. */
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
/** RFC 9110 §8.3.1 `media-type`: `type/subtype *( OWS ";" OWS [ parameter ] )`, values as token or quoted-string. */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;(?:[ \\t]*${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*"))?)*[ \\t]*$`);

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
