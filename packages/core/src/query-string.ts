/**
 * The raw query string as adapters hand it to the core: sliced from the request URL, and
 * read into the `URLSearchParams` that `Paginator.plan()` and filters take.
 * @module
 */

/**
 * The query of a URL or request target (after the first `?`, before `#`), or `''`: what
 * `URL#search` holds, without the `?`, and without parsing the URL.
 *
 * @example
 * ```ts
 * queryStringOf('https://api.example.com/orders?limit=20#top'); // 'limit=20'
 * ```
 */
export function queryStringOf(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  return hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
}

/**
 * `new URLSearchParams(raw)`: the same names and values, in the same order, repeated
 * parameters kept. The constructor walks the text one character at a time in JavaScript
 * (about 9,000 instructions for a query with a cursor, once the costliest step of
 * `paginate()`); when nothing in the text needs decoding (no `%`, no `+`), splitting it
 * at `&` and `=` with `indexOf` gives the same list. Anything else goes to the constructor.
 *
 * @example
 * ```ts
 * const plan = await paginator.plan(parseQueryString(queryStringOf(request.url)));
 * ```
 */
export function parseQueryString(raw: string): URLSearchParams {
  if (raw.includes('%') || raw.includes('+')) return new URLSearchParams(raw);
  const query = new URLSearchParams();
  const end = raw.length;
  // The constructor skips one leading `?`, and empty pairs (`&&`, a trailing `&`).
  let start = raw.charCodeAt(0) === 0x3f ? 1 : 0;
  while (start < end) {
    let amp = raw.indexOf('&', start);
    if (amp === -1) amp = end;
    if (amp > start) {
      const eq = raw.indexOf('=', start);
      if (eq === -1 || eq > amp) query.append(raw.slice(start, amp), '');
      else query.append(raw.slice(start, eq), raw.slice(eq + 1, amp));
    }
    start = amp + 1;
  }
  return query;
}
