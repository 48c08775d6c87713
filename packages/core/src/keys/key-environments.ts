/**
 * Environments: one keyring may accept keys of several prefixes (`acme_live`,
 * `acme_test`), each named (`live`, `test`), so test traffic and production traffic share
 * one deployment and a verified key says which it is. Keys are `<prefix>_` + 38
 * characters, so a key's length alone names the only prefix it can have: matching stays
 * one map lookup however many prefixes there are.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, assertKeyPrefix } from './key-format.ts';

const BODY = 1 + KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;
const ENVIRONMENT_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** The prefixes of a keyring, resolved. Internal: not exported from the package. */
export interface KeyEnvironments {
  /** Prefix of keys issued without an `environment`: the first one configured. */
  readonly defaultPrefix: string;
  /** Every accepted prefix, in configuration order. */
  readonly prefixes: readonly string[];
  /** Environment name → prefix, in configuration order. */
  readonly byName: Readonly<Record<string, string>>;
  /** The environment of a prefix; the prefix itself when it is not (or no longer) configured. */
  environmentOf(prefix: string | null): string;
  /** The prefix of environment `name`, or `undefined`. */
  prefixOf(name: string): string | undefined;
  /** The configured prefix `text` would have if it were a key, or `undefined`. */
  prefixOfKey(text: string): string | undefined;
}

/**
 * `prefix` as `createKeyring` takes it: one prefix (its environment is named after it), or
 * `{ environment: prefix, … }` (the first entry is the default for `issue`).
 */
export function resolveEnvironments(prefix: unknown): KeyEnvironments {
  let entries: [string, string][];
  if (typeof prefix === 'string') {
    assertKeyPrefix(prefix);
    entries = [[prefix, prefix]];
  } else if (typeof prefix === 'object' && prefix !== null && !Array.isArray(prefix)) {
    entries = Object.entries(prefix as Record<string, unknown>).map(([name, p]) => {
      if (!ENVIRONMENT_NAME.test(name)) throw new ConfigError(`prefix: environment names match ^[a-z][a-z0-9_-]{0,31}$ (e.g. 'live'), got ${JSON.stringify(name)}`);
      assertKeyPrefix(p);
      return [name, p];
    });
    if (entries.length === 0) throw new ConfigError("prefix: give at least one environment, e.g. { live: 'acme_live', test: 'acme_test' }");
  } else {
    throw new ConfigError("prefix must be a key prefix ('acme_live') or environments ({ live: 'acme_live', test: 'acme_test' })");
  }
  const byPrefix = new Map<string, string>();
  const byLength = new Map<number, Map<string, string>>();
  for (const [name, p] of entries) {
    if (byPrefix.has(p)) throw new ConfigError(`prefix: ${JSON.stringify(p)} is given to two environments`);
    byPrefix.set(p, name);
    const sameLength = byLength.get(p.length) ?? new Map<string, string>();
    sameLength.set(p, p);
    byLength.set(p.length, sameLength);
  }
  const byName = Object.freeze(Object.fromEntries(entries));
  const single = entries.length === 1 ? entries[0]![1] : undefined;
  return Object.freeze({
    defaultPrefix: entries[0]![1],
    prefixes: Object.freeze(entries.map(([, p]) => p)),
    byName,
    environmentOf: (p: string | null): string => (p === null ? entries[0]![0] : (byPrefix.get(p) ?? p)),
    prefixOf: (name: string): string | undefined => (Object.hasOwn(byName, name) ? byName[name] : undefined),
    prefixOfKey(text: string): string | undefined {
      if (typeof text !== 'string') return undefined;
      const length = text.length - BODY;
      if (single !== undefined) return length === single.length ? single : undefined;
      return byLength.get(length)?.get(text.slice(0, length));
    },
  });
}
