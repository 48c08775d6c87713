/**
 * Keys as issue 24 (item 2) found them in logs: mangled so that no recogniser of the exact
 * key shape sees them. Shared by core's redaction property tests and the example's
 * end-to-end one, with the leak check both use: no 8 characters of a key's secret in a row.
 */
import fc from 'fast-check';

/** Ways a key was mangled, each on its own. */
export const MANGLES = [
  'whole',
  'separator-dash', // ks_live-…
  'separators-dot', // ks.live.…
  'bare-secret',
  'last-cut',
  'one-deleted',
  'extra-underscore',
  'extra-dash',
  'underscore-encoded', // ks_live%5F…, %255F…, … up to four times
  'lowercased',
] as const;
export type Mangle = (typeof MANGLES)[number];

/** `key` (`<prefix>_<38 base62>`) mangled by `how`; `at` picks a position in the secret. */
export function mangleKey(key: string, how: Mangle, at: number, times = 1): string {
  const cut = key.lastIndexOf('_');
  const prefix = key.slice(0, cut);
  const secret = key.slice(cut + 1);
  const i = 1 + (at % (secret.length - 1));
  switch (how) {
    case 'whole':
      return key;
    case 'separator-dash':
      return `${prefix}-${secret}`;
    case 'separators-dot':
      return `${prefix.replaceAll('_', '.')}.${secret}`;
    case 'bare-secret':
      return secret;
    case 'last-cut':
      return key.slice(0, -1);
    case 'one-deleted':
      return `${prefix}_${secret.slice(0, i)}${secret.slice(i + 1)}`;
    case 'extra-underscore':
      return `${prefix}_${secret.slice(0, i)}_${secret.slice(i)}`;
    case 'extra-dash':
      return `${prefix}_${secret.slice(0, i)}-${secret.slice(i)}`;
    case 'underscore-encoded':
      return `${prefix}%${'25'.repeat(Math.max(0, times - 1))}5F${secret}`;
    case 'lowercased':
      return key.toLowerCase();
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A high-entropy key from a seed (fast-check's own strings are biased towards repeats). */
export function keyFrom(prefix: string, seed: number): string {
  let state = seed >>> 0 || 1;
  let secret = '';
  for (let i = 0; i < 38; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    secret += BASE62[(state >>> 0) % 62];
  }
  return `${prefix}_${secret}`;
}

/** A key of one of a few prefixes, mangled one way, with what it was. */
export const mangledKey: fc.Arbitrary<{ key: string; sent: string; how: Mangle }> = fc
  .record({
    prefix: fc.constantFrom('ks_live', 'acme_live', 'sk', 'a', 'k9_test_2'),
    seed: fc.integer(),
    how: fc.constantFrom(...MANGLES),
    at: fc.nat({ max: 1000 }),
    times: fc.integer({ min: 1, max: 4 }),
  })
  .map(({ prefix, seed, how, at, times }) => {
    const key = keyFrom(prefix, seed);
    return { key, sent: mangleKey(key, how, at, times), how };
  });

function decodeAsciiRepeatedly(text: string): string {
  let out = text;
  for (let i = 0; i < 8; i++) out = out.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return out;
}

/**
 * The first run of 8 characters of a key's secret found in `output`, read as it is, with
 * its percent-escapes decoded, and lowercased (a `Host` comes back lowercased), or
 * `undefined`.
 */
export function secretLeak(output: string, keys: readonly string[]): string | undefined {
  const decoded = decodeAsciiRepeatedly(output);
  const views = [output, decoded, decoded.toLowerCase()];
  for (const key of keys) {
    const secret = key.slice(key.lastIndexOf('_') + 1);
    for (let i = 0; i + 8 <= secret.length; i++) {
      const run = secret.slice(i, i + 8);
      if (views[0]!.includes(run) || views[1]!.includes(run) || views[2]!.includes(run.toLowerCase())) return run;
    }
  }
  return undefined;
}
