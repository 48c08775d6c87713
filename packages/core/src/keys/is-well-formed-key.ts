/**
 * The offline half of secret scanning: `keyPattern(prefixes)` finds key-shaped text, and
 * `isWellFormedKey(text, prefixes)` tells a key one of those prefixes could have issued
 * from a look-alike, by its CRC-32 checksum, with no store and no network. A regular
 * expression cannot compute a CRC, so a scanner runs both: match, then check.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { assertKeyPrefix, checkKey, KEY_OK } from './key-format.ts';

/**
 * Whether `text` is, as a whole, a key of one of `prefixes` with a valid checksum: what a
 * secret scanner runs on each `keyPattern` match before reporting it. `true` does not
 * mean the key exists or is live (only the key store knows that); `false` means no
 * keyring with these prefixes ever issued it.
 *
 * @example
 * ```ts
 * const pattern = new RegExp(keyPattern(keyring.prefixes), 'g');
 * const leaked = (text.match(pattern) ?? []).filter((m) => isWellFormedKey(m, keyring.prefixes));
 * ```
 */
export function isWellFormedKey(text: string, prefixes: string | readonly string[]): boolean {
  const all = typeof prefixes === 'string' ? [prefixes] : prefixes;
  if (all.length === 0) throw new ConfigError('isWellFormedKey needs at least one prefix');
  all.forEach((prefix) => assertKeyPrefix(prefix));
  return typeof text === 'string' && all.some((prefix) => checkKey(text, prefix) === KEY_OK);
}
