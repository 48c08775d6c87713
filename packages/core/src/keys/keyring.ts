/**
 * The keyring: issues, rotates, revokes, lists and verifies API keys over a `KeyStore`
 * (DESIGN §3). This module assembles it from its parts: option validation
 * (`keyring-options.ts`), the verification path with its caches (`key-verifier.ts`),
 * `authenticate` (`key-authenticator.ts`), the admin operations (`key-admin.ts`), change
 * listeners (`key-change-emitter.ts`) and coalesced last-use writes
 * (`last-used-writer.ts`). They share one store, clock, logger and cache, so a
 * `revoke`/`rotate`/`invalidate` evicts an identity's cached results at once.
 * @module
 */
import { KeysetError } from '../errors.ts';
import { bestEffortLog } from './internal/best-effort-log.ts';
import type { IssuedKey } from './issued-key.ts';
import { createKeyAdmin, type KeyListResult } from './key-admin.ts';
import { createKeyAuthenticator, type AuthenticateOptions, type AuthenticateRequest } from './key-authenticator.ts';
import { createKeyChangeEmitter, type KeyChangeListener } from './key-change-emitter.ts';
import type { IssueKeyInput, KeyListPlan, RotateKeyOptions, UpdateKeyInput, UpdateLimitsInput } from './key-input.ts';
import type { KeyRecord, VerifiedKey } from './key-record.ts';
import { createKeyVerifier } from './key-verifier.ts';
import { resolveKeyringOptions, type KeyringOptions } from './keyring-options.ts';
import { LastUsedWriter } from './last-used-writer.ts';
import { withMaybeSync } from '../maybe-promise.ts';

// The keyring's public types live beside the code they describe; they are re-exported
// here so `keyring.ts` stays the one module to import the keyring's API from.
export type { IssuedKey } from './issued-key.ts';
export type { KeyListResult } from './key-admin.ts';
export type { AuthenticateOptions, AuthenticateRequest } from './key-authenticator.ts';
export type { KeyChangeEvent, KeyChangeListener } from './key-change-emitter.ts';
export type { KeyringCacheOptions, KeyringLogger, KeyringOptions } from './keyring-options.ts';

/** The key manager. All methods reject with `KeysetError`s (`unavailable` when the store fails). */
export interface Keyring {
  /** The default key prefix: the one `issue` uses without an `environment`. */
  readonly prefix: string;
  /** Every prefix whose keys verify here, default first. */
  readonly prefixes: readonly string[];
  /** Environment name → prefix (a single `prefix` option is `{ [prefix]: prefix }`). */
  readonly environments: Readonly<Record<string, string>>;
  issue(input: IssueKeyInput): Promise<IssuedKey>;
  /** The record of identity `id`; `not_found` when unknown. */
  get(id: string): Promise<KeyRecord>;
  list(plan: KeyListPlan): Promise<KeyListResult>;
  /**
   * Adds a new secret. The current one keeps verifying for `overlapSeconds` (never past its
   * own expiry); any older secret still inside an earlier overlap ends at once, so at most
   * two keys verify. `not_found` when unknown.
   */
  rotate(id: string, options: RotateKeyOptions): Promise<IssuedKey>;
  /** Ends every secret of `id` now. `not_found` when unknown; revoking twice is fine. */
  revoke(id: string): Promise<void>;
  /**
   * Replaces the metadata and/or IP allowlist of `id` (revoked or not), evicts its cached
   * results and tells the change listeners (a revocation bus carries it to every instance)
   * before it resolves. `not_found` when unknown.
   */
  update(id: string, input: UpdateKeyInput): Promise<KeyRecord>;
  /**
   * Replaces the rate limits and/or the quota of `id` (a field left out is kept, `null`
   * removes it) and evicts its cached results here and, through `onChange`, on other
   * instances. Setting `quota` restarts its count at `quota.remaining`. `not_found` when
   * unknown; `invalid_request` for bad input.
   */
  updateLimits(id: string, input: UpdateLimitsInput): Promise<KeyRecord>;
  /** The identity `key` belongs to, or an `AuthenticationError` (`invalid_api_key`). */
  verify(key: string): Promise<VerifiedKey>;
  /** Query-string check, `Authorization` header, verification and scopes, in that order. */
  authenticate(request: AuthenticateRequest, options?: AuthenticateOptions): Promise<VerifiedKey>;
  /** Drops cached results of identity `id` (called by a revocation bus on other instances). */
  invalidate(identityId: string): void;
  /**
   * Drops every cached verification result. A revocation bus calls it when it may have
   * missed events (its connection dropped), so no revoked key outlives the gap.
   */
  invalidateAll(): void;
  /** Subscribes to revocations and rotations; returns the unsubscribe function. */
  onChange(listener: KeyChangeListener): () => void;
  /** Writes pending last-use times and stops the timer. Does not close the store. */
  close(): Promise<void>;
}

/**
 * Creates a keyring. Validates every option now and throws `ConfigError` saying what to change.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live', logger });
 * const { key, record } = await keyring.issue({ name: 'billing service', scopes: ['orders:read'] });
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
  const verifier = createKeyVerifier({ ...config, log, writer });
  const changes = createKeyChangeEmitter(log);
  const admin = createKeyAdmin({ ...config, log, writer, verifier, changes });

  const authenticateMaybeSync = createKeyAuthenticator({ prefixes: environments.prefixes, realm, scopeWildcards: config.scopeWildcards, log, verify: verifier.verify });

  const keyring: Keyring = {
    prefix,
    prefixes: environments.prefixes,
    environments: environments.byName,
    issue: admin.issue,
    get: admin.get,
    list: admin.list,
    rotate: admin.rotate,
    revoke: admin.revoke,
    update: admin.update,
    updateLimits: admin.updateLimits,

    // Both answer synchronously from the verification caches (see maybe-promise.ts).
    verify: withMaybeSync((key: string) => verifier.verify(key, realm)),

    authenticate: withMaybeSync(authenticateMaybeSync),

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
      const result = await writer?.close();
      if (result !== undefined && !result.ok) {
        throw new KeysetError('unavailable', { detail: 'Pending lastUsedAt times could not be written.', cause: result.error });
      }
    },
  };
  return Object.freeze(keyring);
}
