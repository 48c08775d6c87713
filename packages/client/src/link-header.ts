/**
 * RFC 8288 `Link` header parsing, enough for pagination: finds the target of a given
 * relation type. Handles several links, quoted parameters with commas and semicolons,
 * several relation types in one `rel`, and relative targets.
 * @module
 */

/**
 * The absolute URL of the link with relation `rel` (case-insensitive), or `undefined`.
 *
 * @example
 * ```ts
 * findLink('<https://api.example.com/orders?cursor=abc>; rel="next"', 'next', base);
 * // → 'https://api.example.com/orders?cursor=abc'
 * ```
 */
export function findLink(header: string | null | undefined, rel: string, base: string | URL): string | undefined {
  if (!header) return undefined;
  const wanted = rel.toLowerCase();
  let i = 0;
  const n = header.length;
  while (i < n) {
    const open = header.indexOf('<', i);
    if (open < 0) return undefined;
    const close = header.indexOf('>', open + 1);
    if (close < 0) return undefined;
    const target = header.slice(open + 1, close);
    i = close + 1;
    // Parameters run until a comma outside quotes.
    let rels: string[] = [];
    let hasRel = false;
    while (i < n && header[i] !== ',') {
      if (header[i] !== ';') {
        i++;
        continue;
      }
      i++;
      const eq = header.indexOf('=', i);
      const nextSep = nextSeparator(header, i);
      if (eq < 0 || eq > nextSep) {
        i = nextSep;
        continue;
      }
      const name = header.slice(i, eq).trim().toLowerCase();
      let value: string;
      let j = eq + 1;
      while (j < n && header[j] === ' ') j++;
      if (header[j] === '"') {
        let k = j + 1;
        let text = '';
        while (k < n && header[k] !== '"') {
          if (header[k] === '\\' && k + 1 < n) k++;
          text += header[k];
          k++;
        }
        value = text;
        i = k + 1;
      } else {
        const end = nextSeparator(header, j);
        value = header.slice(j, end).trim();
        i = end;
      }
      // RFC 8288 §3.3: a second rel parameter on one link is ignored.
      if (name === 'rel' && !hasRel) {
        rels = value.toLowerCase().split(/\s+/);
        hasRel = true;
      }
    }
    if (rels.includes(wanted)) {
      try {
        return new URL(target, base).href;
      } catch {
        return undefined;
      }
    }
    i++; // skip the comma
  }
  return undefined;
}

function nextSeparator(text: string, from: number): number {
  for (let k = from; k < text.length; k++) {
    const c = text[k];
    if (c === ';' || c === ',') return k;
  }
  return text.length;
}
