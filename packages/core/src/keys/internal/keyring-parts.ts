/**
 * What `createKeyAdmin` shares with the keyring it administers: the resolved options, the
 * verifier and its caches, the last-use writer and the change listeners. The keyring
 * carries them under a symbol no other module can name, so the admin operations (and all
 * they import) are only in a bundle that calls `createKeyAdmin`; a service that only
 * verifies keys never loads them.
 * @module
 */
import type { BestEffortLog } from './best-effort-log.ts';
import type { KeyChangeEmitter } from '../key-change-emitter.ts';
import type { KeyVerifier } from '../key-verifier.ts';
import type { ResolvedKeyringOptions } from '../keyring-options.ts';
import type { LastUsedWriter } from '../last-used-writer.ts';

/** The keyring's parts an administrator needs. Internal: not exported from the package. */
export interface KeyringParts {
  readonly config: ResolvedKeyringOptions;
  readonly log: BestEffortLog;
  /** Holds uses not yet written, so records are never behind; `undefined` records none. */
  readonly writer: LastUsedWriter | undefined;
  readonly verifier: KeyVerifier;
  readonly changes: KeyChangeEmitter;
}

/** The property of a keyring holding its `KeyringParts` (non-enumerable). */
export const KEYRING_PARTS: unique symbol = Symbol('keyset.keyringParts');

/** The parts of a keyring made by `createKeyring`, or `undefined` for anything else. */
export function keyringParts(keyring: unknown): KeyringParts | undefined {
  if (typeof keyring !== 'object' || keyring === null) return undefined;
  return (keyring as { [KEYRING_PARTS]?: KeyringParts })[KEYRING_PARTS];
}
