/**
 * The origin of `Link` headers: the public base URL of an API behind a proxy, validated
 * once when an adapter's middleware is created, or else the request's own `Host`, which
 * must be a valid host name before anything is built on it (`requestOrigin`).
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { containsKeyShapedText } from '../redaction/redact-text.ts';

/**
 * Validates `baseUrl` and returns it without a trailing slash (`undefined` stays
 * `undefined`). It may carry a path prefix: a proxy serving `https://example.com/v1/*`
 * from the app's `/*` → `'https://example.com/v1'`. Throws `ConfigError` for anything
 * that is not an absolute http(s) URL without credentials, query or fragment, on a host
 * `isValidHost` accepts.
 *
 * @example
 * ```ts
 * normalizeBaseUrl('https://api.example.com/v1/'); // 'https://api.example.com/v1'
 * ```
 */
export function normalizeBaseUrl(baseUrl: string | URL | undefined): string | undefined {
  if (baseUrl === undefined) return undefined;
  const text = String(baseUrl);
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw new ConfigError(`baseUrl must be an absolute http(s) URL such as 'https://api.example.com', got '${text}'`, { cause });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`baseUrl must be an http(s) URL without query or fragment, got '${text}'`);
  }
  // Links are refused on a host `isValidHost` refuses: say so now, not on every request.
  if (url.username !== '' || url.password !== '' || !isValidHost(url.host)) {
    throw new ConfigError(`baseUrl must name its host without credentials, as a DNS name, IPv4 or bracketed IPv6 address and an optional port, got '${url.host}'`);
  }
  return url.href.replace(/\/+$/, '');
}

// RFC 9110 §7.2 Host: a bracketed IPv6 literal, or a name (IPv4 included) of letters,
// digits, `-`, `_` (Docker and Kubernetes service names use it) and `.`, then an optional
// port. Regular expressions, not a scan: native matching is the cheaper on every request.
// Tested, not executed: captures cost more than the rest of the check.
const HOST = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?)(?::[0-9]{1,5})?$/;
/** RFC 1123 §2.1 labels: none empty, none starting or ending with `-` (lengths: `MAX_LABEL`). */
const BAD_LABEL = /\.[.-]|-\./;
const MAX_LABEL = 63;
/** RFC 1035 §2.3.4: 253 characters of name (255 octets on the wire), a trailing `.` aside. */
const MAX_HOST_NAME = 253;
/** A run of letters and digits this long may be key-shaped (see redact-text.ts): only then is it checked. */
const MAY_BE_KEY = /[0-9A-Za-z]{19}/;

/**
 * Whether `host` (a `Host` or `X-Forwarded-Host` value) is a host name worth building a
 * URL on: a DNS name (labels of letters, digits, `-` and `_`, each at most 63 characters,
 * at most 253 in all), an IPv4 address or a bracketed IPv6 literal, with an optional
 * port up to 65535, and no key-shaped text in it (`containsKeyShapedText`: a bare secret
 * is a valid DNS label). Everything else (an empty value, spaces, `@`, `/`, a second
 * host, userinfo, percent-encoding) is refused. The one rule every adapter applies before
 * a `Host` becomes the origin of a `Link` header, so a forged `Host` cannot point a
 * client's next page at another server.
 *
 * @example
 * ```ts
 * isValidHost('api.example.com:8443'); // true
 * isValidHost('[::1]:3000'); // true
 * isValidHost('evil.example@api.example.com'); // false
 * ```
 */
export function isValidHost(host: unknown): host is string {
  if (typeof host !== 'string' || host.length > MAX_HOST_NAME + 7 || !HOST.test(host)) return false;
  const bracket = host.lastIndexOf(']');
  const colon = host.lastIndexOf(':');
  const end = colon > bracket ? colon : host.length;
  if (end < host.length && Number(host.slice(end + 1)) > 65535) return false;
  if (bracket >= 0) {
    try {
      return host.includes(':') && new URL(`http://${host.slice(0, end)}/`).hostname !== '';
    } catch {
      return false;
    }
  }
  const name = end < host.length ? host.slice(0, end) : host;
  if (name.length > MAX_HOST_NAME + (name.endsWith('.') ? 1 : 0) || BAD_LABEL.test(name)) return false;
  if (name.length > MAX_LABEL && name.split('.').some((label) => label.length > MAX_LABEL)) return false;
  return !MAY_BE_KEY.test(name) || !containsKeyShapedText(name);
}

/**
 * `protocol://host`, the origin of the URL a client used, for `Link` headers. Throws 400
 * `invalid_request` (`field: 'host'`) unless `protocol` is `http` or `https` (with or
 * without the `:`) and `host` passes `isValidHost`; the problem never quotes the header.
 * Adapters call it on every route, so the answer to a bad `Host` is the same everywhere.
 *
 * @example
 * ```ts
 * requestOrigin('https', request.headers.host); // 'https://api.example.com'
 * ```
 */
export function requestOrigin(protocol: string, host: string | undefined): string {
  const scheme = protocol.endsWith(':') ? protocol.slice(0, -1) : protocol;
  if ((scheme !== 'http' && scheme !== 'https') || !isValidHost(host)) {
    throw new KeysetError('invalid_request', {
      detail: 'The Host header is not a valid host name (a DNS name, an IPv4 address or a bracketed IPv6 literal, and an optional port).',
      extensions: { field: 'host' },
    });
  }
  return `${scheme}://${host}`;
}
