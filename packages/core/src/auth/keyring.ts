/**
 * The keyring: verifies API keys over a `KeyStore`, with its caches, change
 * listeners and coalesced last-use writes. This module assembles it from its parts: option
 * validation (`keyring-options.ts`), the verification path with its caches
 * (`key-verifier.ts`), `authenticate` (`key-authenticator.ts`), change listeners
 * (`key-change-emitter.ts`) and last-use writes (`last-used-writer.ts`). Issuing, rotating,
 * revoking, updating and listing keys is `createKeyAdmin(keyring)` (`key-admin.ts`), which
 * shares these parts, so a `revoke`/`rotate`/`invalidate` evicts an identity's cached
 * results at once; a service that only verifies keys never loads the admin code.
 * @module
 */
import { KeysetError } from '../errors.ts';
import { bestEffortLog } from '../keys/internal/best-effort-log.ts';
import { createKeyAuthenticator, type AuthenticateOptions, type AuthenticateRequest } from './key-authenticator.ts';
import { createKeyChangeEmitter, type KeyChangeListener } from './key-change-emitter.ts';
import type { VerifiedKey } from '../keys/key-record.ts';
import type { PermissionQuery } from './permission-query.ts';
import { createKeyVerifier } from './key-verifier.ts';
import type { KeyringParts } from './keyring-parts.ts';
import { resolveKeyringOptions, type KeyringOptions } from './keyring-options.ts';
import { LastUsedWriter } from './last-used-writer.ts';
import { PepperRehasher } from './pepper-rehasher.ts';

// The keyring's public types live beside the code they describe; they are re-exported
// here so `keyring.ts` stays the one module to import the keyring's API from.
export type { AuthenticateOptions, AuthenticateRequest } from './key-authenticator.ts';
export type { KeyChangeEvent, KeyChangeListener } from './key-change-emitter.ts';
export type { KeyCacheResult, KeyringCacheOptions, KeyringLogger, KeyringOptions } from './keyring-options.ts';

/**
 * Verifies keys. All methods reject with `KeysetError`s (`unavailable` when the store
 * fails). Issuing, rotating, revoking, updating and listing keys: `createKeyAdmin(keyring)`.
 */
export interface Keyring {
  /** The default key prefix: the one `createKeyAdmin(keyring).issue` uses without an `environment`. */
  readonly prefix: string;
  /** Every prefix whose keys verify here, default first. */
  readonly prefixes: readonly string[];
  /** Environment name → prefix (a single `prefix` option is `{ [prefix]: prefix }`). */
  readonly environments: Readonly<Record<string, string>>;
  /** The identity `key` belongs to, or an `AuthenticationError` (`invalid_api_key`). */
  verify(key: string): Promise<VerifiedKey>;
  /** Query-string check, `Authorization` header, verification, IP allowlist and scopes, in that order. */
  authenticate(request: AuthenticateRequest, options?: AuthenticateOptions): Promise<VerifiedKey>;
  /**
   * Throws the 403 `insufficient_scope` (its `missing_scopes` member names them) when
   * `key` lacks any of `scopes` or does not satisfy `permissions` (a `PermissionQuery`,
   * required beside `scopes`); `authenticate` calls it with the endpoint's. The
   * guard calls it on its own, after the key is identified, to charge the refused
   * request to the key's rate limits.
   */
  authorize(key: VerifiedKey, scopes: readonly string[] | undefined, permissions?: PermissionQuery): void;
  /** Drops cached results of identity `id` (called by a revocation bus on other instances). */
  invalidate(identityId: string): void;
  /**
   * Drops every cached verification result. A revocation bus calls it when it may have
   * missed events (its connection dropped), so no revoked key outlives the gap.
   */
  invalidateAll(): void;
  /** Subscribes to revocations, rotations and updates (made through `createKeyAdmin`); returns the unsubscribe function. */
  onChange(listener: KeyChangeListener): () => void;
  /**
   * Writes pending re-hashes (after a pepper rotation) and last-use times, and stops the
   * timers. Does not close the store.
   */
  close(): Promise<void>;
  /**
   * What `createKeyAdmin`, `createOwnerAdmin` and `createLeakAlertHandler` work with: this
   * keyring's options, caches, pending last-use writes and change listeners. A method, not
   * a property, so that logging or serialising a keyring never walks into its store.
   */
  parts(): KeyringParts;
}

/**
 * Creates a keyring. Validates every option now and throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', logger });
 * const caller = await keyring.authenticate({ authorization: `ApiKey ${key}`, url: '/api/orders' }, { scopes: ['orders:read'] });
 * ```
 */
export function createKeyring(options: KeyringOptions): Keyring {
  const config = resolveKeyringOptions(options);
  const { store, prefix, environments, realm, lastUsedIntervalMs } = config;
  const log = bestEffortLog(config.logger, config.clock);
  const writer =
    lastUsedIntervalMs === undefined
      ? undefined
      : new LastUsedWriter(store, lastUsedIntervalMs, (error, count) => {
          log.error({ err: error, count }, 'api key lastUsedAt write failed; retrying next interval');
        });
  const rehasher =
    config.peppers.digests.length === 1
      ? undefined
      : new PepperRehasher(store, (error, count) => {
          log.error({ err: error, count }, 'api key re-hash under the newest pepper failed; retried on the next use');
        });
  const verifier = createKeyVerifier({ ...config, log, writer, rehasher });
  const changes = createKeyChangeEmitter(log);

  const { authenticate, authorize } = createKeyAuthenticator({ prefixes: environments.prefixes, realm, schemes: config.schemes, scopeWildcards: config.scopeWildcards, log, verify: verifier.verify });

  const keyring: Keyring = {
    prefix,
    prefixes: environments.prefixes,
    environments: environments.byName,

    async verify(key: string): Promise<VerifiedKey> {
      return verifier.verify(key, realm);
    },

    authenticate,

    authorize,

    invalidate(identityId: string): void {
      verifier.evict(identityId);
    },

    invalidateAll(): void {
      verifier.evictAll();
    },

    onChange(listener: KeyChangeListener): () => void {
      return changes.subscribe(listener);
    },

    async close(): Promise<void> {
      // Re-hashes first: last-use writes name the new digests.
      await rehasher?.close();
      const result = await writer?.close();
      if (result !== undefined && !result.ok) {
        throw new KeysetError('unavailable', { detail: 'Pending lastUsedAt times could not be written.', cause: result.error });
      }
    },

    parts(): KeyringParts {
      return parts;
    },
  };
  const parts: KeyringParts = Object.freeze({ config, log, writer, verifier, changes });
  return Object.freeze(keyring);
}
