/**
 * RFC 8288 `Link` headers of a page: the request URL with the position moved and only the
 * parameters the endpoint knows kept (`limit`, `sort`, its filters, and those the
 * application declares with `keepParams`), each byte for byte as the client sent it. No
 * other client text goes back: an unknown parameter is dropped from every link, whatever
 * it holds (a key cut short or split by dots is no key to any recogniser). What is kept is
 * still checked: a host with userinfo, or key-shaped text (whole or
 * mangled) in the host, the path or a kept parameter, is refused rather than echoed. The
 * check is nearly all one scan of the origin and path for a 19-character run.
 *
 * The links' origin: the public base URL of an API behind a proxy, validated once when an
 * adapter's middleware is created (`normalizeBaseUrl`), or else the request's own `Host`,
 * which must be a valid host name before anything is built on it (`requestOrigin`).
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { containsKeyShapedText } from '../redaction/redact-text.ts';

/** Relation types a page links to (RFC 8288 §2.1.1; IANA link relations registry). */
export type PageRel = 'next' | 'prev' | 'first';

/**
 * Which query parameters (by decoded name) the links keep besides the position: the
 * paginator passes `limit`, `sort` when clients may sort, the plan's filter names and its
 * `keepParams`. Every other parameter is dropped.
 */
export type KeepParam = (name: string) => boolean;

/** A query parameter name (RFC 3986 query characters, decoded), as `keepParams` takes it. */
const PARAM_NAME = /^[A-Za-z0-9._~!$'()*+,;:@/?-]{1,64}$/;

/**
 * The names every link of the endpoint keeps: `limit`, `sort` when clients may sort, and
 * `keepParams`, validated (a position parameter is no parameter to keep: it moves). Throws
 * `ConfigError` when `createPaginator` is given a bad one.
 */
export function keptParams(keepParams: readonly string[], sortable: boolean): ReadonlySet<string> {
  if (!Array.isArray(keepParams)) throw new ConfigError(`keepParams must be a list of query parameter names such as ['expand', 'fields'], got ${JSON.stringify(keepParams)}`);
  for (const name of keepParams) {
    if (typeof name !== 'string' || !PARAM_NAME.test(name)) {
      throw new ConfigError(`keepParams: ${JSON.stringify(name)} is not a query parameter name (1-64 letters, digits or ._~!$'()*+,;:@/?-)`);
    }
    if (name === 'cursor' || name === 'offset') throw new ConfigError(`keepParams: '${name}' is the page position, which every link sets itself; remove it`);
  }
  return new Set(['limit', ...(sortable ? ['sort'] : []), ...keepParams]);
}

/** One link: `value` `null` drops the position parameter (the endpoint's default start). */
export interface PageLinkTarget {
  readonly rel: PageRel;
  readonly name: 'cursor' | 'offset';
  readonly value: string | null;
}

// Characters that may stand in a URI as they are (RFC 3986 unreserved, reserved, '%').
const URI_SAFE = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
// An absolute URL with an authority (`scheme://host…`); anything else takes the `URL`
// path, which throws a TypeError for a relative URL instead of emitting a relative Link.
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]/;

function paramName(raw: string): string {
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

function viaUrl(text: string, target: PageLinkTarget, keep: KeepParam): string {
  const next = new URL(text);
  for (const name of new Set(next.searchParams.keys())) if (name !== target.name && !keep(name)) next.searchParams.delete(name);
  next.searchParams.delete(target.name === 'cursor' ? 'offset' : 'cursor');
  if (target.value === null) next.searchParams.delete(target.name);
  else next.searchParams.set(target.name, target.value);
  next.hash = '';
  return next.href;
}

/** {@link pageLinks} for targets that move different parameters: each link built on its own. */
function mixedLinks(text: string, targets: readonly PageLinkTarget[], keep: KeepParam): string {
  const hash = text.indexOf('#');
  const withoutHash = hash < 0 ? text : text.slice(0, hash);
  const q = withoutHash.indexOf('?');
  const path = q < 0 ? withoutHash : withoutHash.slice(0, q);
  // The query split once: each part as written and its decoded name, side by side.
  const parts: string[] = [];
  const names: string[] = [];
  if (q >= 0) {
    for (const part of withoutHash.slice(q + 1).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const key = paramName(eq < 0 ? part : part.slice(0, eq));
      if (key !== 'cursor' && key !== 'offset' && !keep(key)) continue;
      parts.push(part);
      names.push(key);
    }
  }
  let header = '';
  for (const target of targets) {
    const { name, value } = target;
    const other = name === 'cursor' ? 'offset' : 'cursor';
    const position = value === null ? null : `${name}=${value}`;
    let query = '';
    let placed = position === null;
    for (let i = 0; i < parts.length; i++) {
      const key = names[i] as string;
      if (key === other) continue;
      let piece: string;
      if (key !== name) piece = parts[i] as string;
      else if (!placed) {
        // Where the old position stood, like URLSearchParams#set.
        piece = position as string;
        placed = true;
      } else continue;
      query = query === '' ? piece : `${query}&${piece}`;
    }
    if (!placed) query = query === '' ? (position as string) : `${query}&${position as string}`;
    if (header !== '') header += ', ';
    header += `<${query === '' ? path : `${path}?${query}`}>; rel="${target.rel}"`;
  }
  return header;
}

/** Shorter text cannot be key-shaped (a run of 19 letters and digits at least): not checked. */
const MIN_KEY_SHAPED = 19;
/** A run of letters and digits this long may be key-shaped (see redact-text.ts): only then is it checked. */
const MAY_BE_KEY = /[0-9A-Za-z]{19}/;

function invalidHost(): KeysetError {
  return new KeysetError('invalid_request', {
    detail: 'The Host header is not a valid host name (a DNS name, an IPv4 address or a bracketed IPv6 literal, and an optional port).',
    extensions: { field: 'host' },
  });
}

/**
 * Throws rather than echo the origin and path of `base` (the URL up to its query) in a
 * `Link`: a host with userinfo or key-shaped text (400 `invalid_request`, field `host`;
 * its syntax the adapters hold to `isValidHost` before routing), or key-shaped text,
 * whole or mangled, in the path (field `path`). Two native tests in the common case.
 */
function refuseReflectedBase(base: string): void {
  if (!MAY_BE_KEY.test(base) && base.indexOf('@') < 0) return;
  const scheme = base.indexOf('://');
  if (scheme < 0) return; // relative: the URL path throws its TypeError
  const slash = base.indexOf('/', scheme + 3);
  const end = slash < 0 ? base.length : slash;
  const authority = base.slice(scheme + 3, end);
  if (authority.includes('@') || (MAY_BE_KEY.test(authority) && !isValidHost(authority))) throw invalidHost();
  if (base.length - end >= MIN_KEY_SHAPED && containsKeyShapedText(base.slice(end))) {
    throw new KeysetError('invalid_request', { detail: 'The request path holds an API key or text shaped like one.', extensions: { field: 'path' } });
  }
}

/**
 * Throws 400 `api_key_in_query` rather than keep a query parameter `part` (named `name`,
 * decoded) holding key-shaped text, whole or mangled, in a `Link`. Only for parameters the
 * links keep, whose names the endpoint declared (so naming it echoes nothing the client
 * chose): the position is replaced or dropped, and a cursor is long random text by nature.
 * Parts shorter than a key-shaped run are never passed.
 */
function refuseReflectedParameter(part: string, name: string): void {
  const eq = part.indexOf('=');
  if (containsKeyShapedText(eq < 0 ? part : part.slice(0, eq)) || (eq >= 0 && containsKeyShapedText(part.slice(eq + 1)))) {
    throw new KeysetError('api_key_in_query', {
      detail: `The query parameter \`${name}\` holds an API key or text shaped like one: send keys in the Authorization header, never in a URL.`,
      extensions: { field: name },
    });
  }
}

/** Both checks over a whole URL, for the paths that do not split the query themselves. */
function refuseReflected(text: string, keep: KeepParam): void {
  const hash = text.indexOf('#');
  const withoutHash = hash < 0 ? text : text.slice(0, hash);
  const q = withoutHash.indexOf('?');
  refuseReflectedBase(q < 0 ? withoutHash : withoutHash.slice(0, q));
  if (q < 0) return;
  for (const part of withoutHash.slice(q + 1).split('&')) {
    if (part.length < MIN_KEY_SHAPED) continue;
    const eq = part.indexOf('=');
    const name = paramName(eq < 0 ? part : part.slice(0, eq));
    if (name !== 'cursor' && name !== 'offset' && keep(name)) refuseReflectedParameter(part, name);
  }
}

/** The URL with the kept parameters and no position: `path`, `?` and the parameters, if any. */
function withoutPosition(path: string, before: string, after: string): string {
  const rest = before === '' ? after : after === '' ? before : `${before}&${after}`;
  return rest === '' ? path : `${path}?${rest}`;
}

/**
 * The `Link` header value for `targets` (in order), from the absolute request `url`, or
 * `undefined` when there are none. Parameters `keep` does not name are dropped, and so is
 * the other mode's parameter (`offset` for a cursor link, `cursor` for an offset link). A
 * plain string edit, because re-serialising through `URL` costs more than the rest of
 * the page; URLs with characters that need escaping take the `URL` path instead. Throws
 * `TypeError` for a relative URL, and a 400 `KeysetError` rather than echo a host with
 * userinfo or key-shaped text in the host, the path or a kept parameter (see
 * `refuseReflectedBase`).
 *
 * @example
 * ```ts
 * pageLinks('https://api.example.com/orders?limit=2&cursor=abc&utm=x', [
 *   { rel: 'next', name: 'cursor', value: 'def' },
 *   { rel: 'first', name: 'cursor', value: null },
 * ], (name) => name === 'limit');
 * // → '<https://api.example.com/orders?limit=2&cursor=def>; rel="next", <https://api.example.com/orders?limit=2>; rel="first"'
 * ```
 */
export function pageLinks(url: string | URL, targets: readonly PageLinkTarget[], keep: KeepParam): string | undefined {
  if (targets.length === 0) return undefined;
  if (typeof keep !== 'function') throw new TypeError('pageLinks: keep must be a function naming the query parameters the links keep');
  const text = typeof url === 'string' ? url : url.href;
  if (!URI_SAFE.test(text) || !ABSOLUTE.test(text)) {
    refuseReflected(text, keep);
    return targets.map((t) => `<${viaUrl(text, t, keep)}>; rel="${t.rel}"`).join(', ');
  }
  const hash = text.indexOf('#');
  const end = hash < 0 ? text.length : hash;
  const q = text.indexOf('?');
  const path = q < 0 || q > end ? text.slice(0, end) : text.slice(0, q);
  const name = (targets[0] as PageLinkTarget).name;
  for (const target of targets) {
    if (target.name !== name) {
      refuseReflected(text, keep);
      return mixedLinks(text, targets, keep);
    }
  }
  refuseReflectedBase(path);
  const other = name === 'cursor' ? 'offset' : 'cursor';
  // One pass over the query, shared by every link: the parameters kept as written before
  // the first position parameter (where the new one goes, like URLSearchParams#set) and
  // after it; the other mode's parameter and repeated positions are dropped.
  let before = '';
  let after = '';
  let found = false;
  if (q >= 0 && q < end) {
    for (let start = q + 1; start <= end; ) {
      let stop = text.indexOf('&', start);
      if (stop < 0 || stop > end) stop = end;
      if (stop > start) {
        const part = text.slice(start, stop);
        const eq = part.indexOf('=');
        const key = paramName(eq < 0 ? part : part.slice(0, eq));
        if (key === name) found = true;
        else if (key === other || !keep(key)) {
          // dropped
        } else {
          if (part.length >= MIN_KEY_SHAPED) refuseReflectedParameter(part, key);
          if (found) after = after === '' ? part : `${after}&${part}`;
          else before = before === '' ? part : `${before}&${part}`;
        }
      }
      start = stop + 1;
    }
  }
  // The text on either side of a position value, built once for every link that carries
  // one (not found: every kept parameter is in `before`, and the position goes last).
  const open = before === '' ? `<${path}?${name}=` : `<${path}?${before}&${name}=`;
  const close = after === '' ? '>; rel="' : `&${after}>; rel="`;
  let header = '';
  for (const target of targets) {
    const { value } = target;
    // Cursor values are base64url and offsets digits: both safe in a query as they are.
    const link = value !== null ? `${open}${value}${close}${target.rel}"` : `<${withoutPosition(path, before, after)}>; rel="${target.rel}"`;
    header = header === '' ? link : `${header}, ${link}`;
  }
  return header;
}

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
