/**
 * Where cursor secrets come from in a real deployment: configuration, never a constant in
 * the source. `cursorSecrets()` reads them from one string (an environment variable,
 * usually) and refuses to start when there is none, unless the caller says this is
 * development. Core reads no environment itself (it runs where there is no `process`), so
 * "development" is the caller's explicit `development: true`.
 * @module
 */
import { defaultCrypto } from '../internal/default-crypto.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { ConfigError } from '../errors.ts';
import { encodeBase64url } from '../internal/base64url.ts';

/**
 * How a secret made for one process begins. The codec reads it to explain a cursor that
 * fails its signature check here: in development, the likely cause is another instance
 * (or this one before a restart), each signing with a secret of its own. The random part
 * after it is the secret's strength; the prefix only labels it.
 */
export const THROWAWAY_SECRET_PREFIX = 'keyset-throwaway-secret:';

/** Options of `cursorSecrets()`. */
export interface CursorSecretsOptions {
  /**
   * Development only: with no secret configured, sign with a random one made for this
   * process (cursors stop working at restart and differ between instances; a cursor
   * refused for that says so in its problem's detail). Decide it
   * explicitly, e.g. `process.env.NODE_ENV === 'development'`: anything else fails fast.
   * @default false
   */
  development?: boolean;
  /**
   * The variable's name, for the error message.
   * @default 'CURSOR_SECRET'
   */
  name?: string;
}

/** Every name `CursorSecretsOptions` knows, checked on each call. */
const CURSOR_SECRETS_OPTIONS = { development: true, name: true } as const satisfies KnownOptions<CursorSecretsOptions>;

/**
 * The `cursor.secrets` list from configuration text: comma-separated secrets, newest first
 * (sign with the first, verify with all, so a new secret can be rolled out before the old
 * one is dropped). Throws `ConfigError` naming the variable when it is missing or empty,
 * unless `development` is true; a secret shorter than 32 bytes is refused by the codec.
 *
 * @example
 * ```ts
 * const paginator = createPaginator({
 *   endpoint: 'GET /orders',
 *   sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }],
 *   cursor: { secrets: cursorSecrets(process.env.CURSOR_SECRET, { development: process.env.NODE_ENV === 'development' }) },
 * });
 * ```
 */
export function cursorSecrets(value: string | undefined, options: CursorSecretsOptions = {}): string[] {
  assertKnownOptions('cursorSecrets', options, CURSOR_SECRETS_OPTIONS);
  const { development = false, name = 'CURSOR_SECRET' } = options;
  const secrets = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (secrets.length > 0) return secrets;
  if (development) return [`${THROWAWAY_SECRET_PREFIX}${encodeBase64url(defaultCrypto.randomBytes(32))}`];
  throw new ConfigError(
    `${name} is not set: cursors are signed with a secret every instance shares. ` +
      `Set ${name} to at least 32 random bytes (e.g. \`openssl rand -base64 32\`; several, comma-separated, newest first, to rotate), ` +
      'or pass { development: true } to sign with a throwaway secret on a developer machine.',
  );
}
