/**
 * RFC 8288 `Link` headers of a page: the request URL with only the position moved, so
 * every other parameter (limit, filters, sort) stays byte for byte as the client sent it.
 * @module
 */

/** Relation types a page links to (RFC 8288 §2.1.1; IANA link relations registry). */
export type PageRel = 'next' | 'prev' | 'first';

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

function viaUrl(text: string, target: PageLinkTarget): string {
  const next = new URL(text);
  next.searchParams.delete(target.name === 'cursor' ? 'offset' : 'cursor');
  if (target.value === null) next.searchParams.delete(target.name);
  else next.searchParams.set(target.name, target.value);
  next.hash = '';
  return next.href;
}

/** {@link pageLinks} for targets that move different parameters: each link built on its own. */
function mixedLinks(text: string, targets: readonly PageLinkTarget[]): string {
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
      parts.push(part);
      names.push(paramName(eq < 0 ? part : part.slice(0, eq)));
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

/** The URL with the kept parameters and no position: `path`, `?` and the parameters, if any. */
function withoutPosition(path: string, before: string, after: string): string {
  const rest = before === '' ? after : after === '' ? before : `${before}&${after}`;
  return rest === '' ? path : `${path}?${rest}`;
}

/**
 * The `Link` header value for `targets` (in order), from the absolute request `url`, or
 * `undefined` when there are none. The other mode's parameter (`offset` for a cursor
 * link, `cursor` for an offset link) is dropped. A plain string edit, because
 * re-serialising through `URL` costs more than the rest of the page; URLs with
 * characters that need escaping take the `URL` path instead. Throws `TypeError` for a
 * relative URL.
 *
 * @example
 * ```ts
 * pageLinks('https://api.example.com/orders?limit=2&cursor=abc', [
 *   { rel: 'next', name: 'cursor', value: 'def' },
 *   { rel: 'first', name: 'cursor', value: null },
 * ]);
 * // → '<https://api.example.com/orders?limit=2&cursor=def>; rel="next", <https://api.example.com/orders?limit=2>; rel="first"'
 * ```
 */
export function pageLinks(url: string | URL, targets: readonly PageLinkTarget[]): string | undefined {
  if (targets.length === 0) return undefined;
  const text = typeof url === 'string' ? url : url.href;
  if (!URI_SAFE.test(text) || !ABSOLUTE.test(text)) {
    return targets.map((t) => `<${viaUrl(text, t)}>; rel="${t.rel}"`).join(', ');
  }
  const hash = text.indexOf('#');
  const end = hash < 0 ? text.length : hash;
  const q = text.indexOf('?');
  const path = q < 0 || q > end ? text.slice(0, end) : text.slice(0, q);
  const name = (targets[0] as PageLinkTarget).name;
  for (const target of targets) if (target.name !== name) return mixedLinks(text, targets);
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
        else if (key === other) {
          // dropped
        } else if (found) after = after === '' ? part : `${after}&${part}`;
        else before = before === '' ? part : `${before}&${part}`;
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
