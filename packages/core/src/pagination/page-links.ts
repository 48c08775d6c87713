/**
 * RFC 8288 `Link` headers of a page: the request URL with the position moved and only the
 * parameters the endpoint knows kept (`limit`, `sort`, its filters, and those the
 * application declares with `keepParams`), each byte for byte as the client sent it. No
 * other client text goes back: an unknown parameter is dropped from every link, whatever
 * it holds (a key cut short or split by dots is no key to any recogniser). What is kept is
 * still checked: a host with userinfo, or key-shaped text (whole or
 * mangled) in the host, the path or a kept parameter, is refused rather than echoed. The
 * check is nearly all one scan of the origin and path for a 19-character run.
 * @module
 */
import { KeysetError } from '../errors.ts';
import { containsKeyShapedText } from '../redaction/redact-text.ts';
import { isValidHost } from './base-url.ts';

/** Relation types a page links to (RFC 8288 §2.1.1; IANA link relations registry). */
export type PageRel = 'next' | 'prev' | 'first';

/**
 * Which query parameters (by decoded name) the links keep besides the position: the
 * paginator passes `limit`, `sort` when clients may sort, the plan's filter names and its
 * `keepParams`. Every other parameter is dropped.
 */
export type KeepParam = (name: string) => boolean;

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
