/**
 * What a keyring shares with the factories that administer it (`createKeyAdmin`,
 * `createOwnerAdmin`) and with `createLeakAlertHandler`: the resolved options, the verifier
 * and its caches, the pending last-use writes and the change listeners. `keyring.parts()`
 * hands them over, so an admin works on the keyring's own store and caches, and a
 * revocation evicts the key here before it resolves. The admin code stays in modules of
 * its own: a service that only verifies keys never loads it.
 * @module
 */
import type { BestEffortLog } from '../keys/internal/best-effort-log.ts';
import type { KeyChangeEmitter } from './key-change-emitter.ts';
import type { KeyVerifier } from './key-verifier.ts';
import type { ResolvedKeyringOptions } from './keyring-options.ts';
import type { LastUsedWriter } from './last-used-writer.ts';

/**
 * The parts of a keyring that `createKeyAdmin`, `createOwnerAdmin` and
 * `createLeakAlertHandler` work with; application code does not need them.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live' });
 * const { config } = keyring.parts();
 * console.log(typeof config.store.recordLeak === 'function'); // true: the memory store records leaks
 * ```
 */
export interface KeyringParts {
  /** The keyring's options, validated and with their defaults: its store, environments, digests, clock and crypto provider. */
  readonly config: ResolvedKeyringOptions;
  /** The keyring's logger, which never throws. */
  readonly log: BestEffortLog;
  /** Holds uses not yet written, so records are never behind; `undefined` records none. */
  readonly writer: LastUsedWriter | undefined;
  /** The verification path and its caches, which a revocation, rotation or update evicts. */
  readonly verifier: KeyVerifier;
  /** The listeners of `keyring.onChange` (a revocation bus), told of every change. */
  readonly changes: KeyChangeEmitter;
}
