/**
 * A raw query string as the `URLSearchParams` the core reads. `new URLSearchParams(text)`
 * walks the text one character at a time in JavaScript (about 9,000 instructions for a
 * query with a cursor, the costliest step of `paginate()`); when nothing in the text needs
 * decoding (no `%`, no `+`), splitting it at `&` and `=` with `indexOf` gives the same
 * list, appended in order. Anything else goes to the constructor. (The same as
 * @keyset/hono's internal/query.ts: adapters import only the core's public entry.)
 * @module
 */

/** `new URLSearchParams(raw)`, with the same names and values in the same order. */
export function parseQuery(raw: string): URLSearchParams {
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

