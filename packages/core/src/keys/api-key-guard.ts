/**
 * The one call adapters make per protected request (docs/architecture.md, "The guard
 * adapters call"): key in query (400) → `Authorization: ApiKey` (401 missing) → syntax
 * and checksum (401, no store access) → cache → store (401; store down → 503) → scopes
 * (403) → rate limit (429 / 503). Adapters map a thrown `KeysetError` with `toProblem`.
 * @module
 */
import { ConfigError } from '../errors.ts';
import type { RateLimiter } from '../rate-limit/types.ts';
import type { VerifiedKey } from './key-record.ts';
import type { AuthenticateRequest, Keyring } from './keyring.ts';

/** Options of `createApiKeyGuard`. */
export interface ApiKeyGuardOptions {
  /** Verifies keys; only `authenticate` is used. */
  keyring: Pick<Keyring, 'authenticate'>;
  /** Per-identity rate limit: the identity's `rateLimit`, else the limiter's default. */
  limiter?: RateLimiter;
  /**
   * Realm of the `WWW-Authenticate` challenge.
   * @default the keyring's realm
   */
  realm?: string;
}

/** What an endpoint requires. */
export interface ApiKeyGuardCheckOptions {
  /** Scopes the endpoint requires; all must be granted. */
  scopes?: readonly string[];
}

/** A request that passed: the caller and the headers to add to the response (`RateLimit…`). */
export interface ApiKeyGuardResult {
  key: VerifiedKey;
  headers: Record<string, string>;
}

/** The guard; `check` throws `KeysetError`s, never a plain error for client input. */
export interface ApiKeyGuard {
  check(request: AuthenticateRequest, options?: ApiKeyGuardCheckOptions): Promise<ApiKeyGuardResult>;
}

/**
 * Creates the guard adapters call for every protected route.
 *
 * @example
 * ```ts
 * const guard = createApiKeyGuard({ keyring, limiter });
 * const { key, headers } = await guard.check({ authorization: req.headers.authorization, url: req.url }, { scopes: ['orders:read'] });
 * ```
 */
export function createApiKeyGuard(options: ApiKeyGuardOptions): ApiKeyGuard {
  const { keyring, limiter, realm } = options;
  if (typeof keyring?.authenticate !== 'function') throw new ConfigError('keyring must be a Keyring (see createKeyring)');
  if (limiter !== undefined && typeof limiter.check !== 'function') throw new ConfigError('limiter must be a RateLimiter (see createRateLimiter)');

  return Object.freeze({
    async check(request: AuthenticateRequest, checkOptions: ApiKeyGuardCheckOptions = {}): Promise<ApiKeyGuardResult> {
      const { scopes } = checkOptions;
      const authOptions = realm === undefined ? { ...(scopes && { scopes }) } : { realm, ...(scopes && { scopes }) };
      const key = await keyring.authenticate(request, authOptions);
      if (limiter === undefined) return { key, headers: {} };
      // The limit belongs to the identity: both secrets of a rotation share one quota.
      const { headers } = await limiter.check(key.id, key.rateLimit ?? undefined);
      return { key, headers: { ...headers } };
    },
  });
}
