/**
 * Options checked at run time: a misspelt option (`maxPage`, `apikey`) is refused, not
 * silently ignored. The same rule and message as `@keyset/core`'s factories; this package
 * depends on nothing, so it keeps its own copy, and throws `TypeError` as its other
 * argument checks do.
 * @module
 */

/** Edit distance with adjacent transpositions (restricted Damerau-Levenshtein). */
function editDistance(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

/** The known name `name` most likely misspells (case ignored, within a third of its length in edits), if any. */
function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  if (lower.length > 100) return undefined;
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(lower.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Every key of `T`, each `true`: a list that cannot drift from the interface. */
export type KnownOptions<T> = { readonly [K in keyof T & string]-?: true };

/**
 * Throws a `TypeError` naming the first name of `options` that `known` does not list, with
 * the closest known name: ``paginate: unknown option `maxPage` (did you mean `maxPages`?)``.
 * A name with no close match is quoted only when short and with no run of 8 letters and
 * digits (it could be a pasted key).
 */
export function assertKnownOptions(where: string, options: object, known: Readonly<Record<string, true>>): void {
  const names = Object.keys(known);
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(known, name)) continue;
    const suggestion = closestName(name, names);
    const quoted = suggestion !== undefined || (name.length <= 64 && !/[A-Za-z0-9]{8}/.test(name)) ? name : `…(${name.length} characters)`;
    const hint = suggestion !== undefined ? `did you mean \`${suggestion}\`?` : `known: ${names.map((n) => `\`${n}\``).join(', ')}`;
    throw new TypeError(`${where}: unknown option \`${quoted}\` (${hint})`);
  }
}
