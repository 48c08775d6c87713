/**
 * The keyring's administration: issue, get, list, rotate and revoke (DESIGN §3). Every
 * input is validated before the store is asked; a revocation or rotation evicts the
 * identity's cached results here and tells the change listeners before it resolves.
 * @module
 */
import { ConfigError, KeysetError } from '../errors.ts';
import { randomBase62 } from '../internal/base62.ts';
import { toHex } from '../internal/hex.ts';
import type { BestEffortLog } from './internal/best-effort-log.ts';
import { time } from './internal/key-validity.ts';
import { storeCall } from './internal/store-call.ts';
import { issuedKey, type IssuedKey } from './issued-key.ts';
import type { KeyChangeEmitter } from './key-change-emitter.ts';
import { generateKey } from './key-format.ts';
import {
  toListQuery,
  validateIssueInput,
  validateLimitsPatch,
  validateOverlap,
  validateUpdateInput,
  type IssueKeyInput,
  type KeyListPlan,
  type RotateKeyOptions,
  type UpdateKeyInput,
  type UpdateLimitsInput,
} from './key-input.ts';
import { toKeyRecord, type KeyRecord } from './key-record.ts';
import type { StoredIdentity, StoredKey, StoredSecret } from './key-store.ts';
import type { KeyVerifier } from './key-verifier.ts';
import type { ResolvedKeyringOptions } from './keyring-options.ts';
import type { LastUsedWriter } from './last-used-writer.ts';
import { rotationEnds } from './rotation-ends.ts';

/** One page of `Keyring.list`. */
export interface KeyListResult {
  /**
   * Up to `plan.take` records, newest first (oldest first for a backward plan): one more
   * than `limit` when there is more in that direction, exactly what `Paginator.page()`
   * expects (it trims, restores newest-first order and builds the cursors).
   */
  records: KeyRecord[];
  /** Whether there are records after the first `limit`. */
  hasMore: boolean;
  /** All identities (offset mode only). */
  total?: number;
}

/** What the admin operations need from the keyring. */
export interface KeyAdminOptions extends Pick<ResolvedKeyringOptions, 'store' | 'environments' | 'rawDigest' | 'clock' | 'crypto'> {
  readonly log: BestEffortLog;
  /** Holds uses not yet written, so records are never behind; `undefined` records none. */
  readonly writer: LastUsedWriter | undefined;
  readonly verifier: KeyVerifier;
  readonly changes: KeyChangeEmitter;
}

/** The keyring's admin methods; see `Keyring`. Internal: not exported from the package. */
export interface KeyAdmin {
  issue(input: IssueKeyInput): Promise<IssuedKey>;
  get(id: string): Promise<KeyRecord>;
  list(plan: KeyListPlan): Promise<KeyListResult>;
  rotate(id: string, options: RotateKeyOptions): Promise<IssuedKey>;
  revoke(id: string): Promise<void>;
  update(id: string, input: UpdateKeyInput): Promise<KeyRecord>;
  updateLimits(id: string, input: UpdateLimitsInput): Promise<KeyRecord>;
}

const ID_PATTERN = /^key_[0-9A-Za-z]{22}$/;

function notFound(): KeysetError {
  return new KeysetError('not_found', { detail: 'No API key with this id.' });
}

/** Creates the admin operations over the keyring's store, verifier and listeners. */
export function createKeyAdmin(options: KeyAdminOptions): KeyAdmin {
  const { store, environments, rawDigest, clock, crypto, log, writer, verifier, changes } = options;

  async function newSecret(now: number, prefix: string): Promise<{ key: string; secret: StoredSecret }> {
    const key = generateKey(prefix, { crypto });
    const secret: StoredSecret = { digest: toHex(await rawDigest(key)), last4: key.slice(-4), createdAt: new Date(now), lastUsedAt: null, expiresAt: null };
    return { key, secret };
  }

  const pendingUse = (digest: string): number | undefined => writer?.pending(digest);
  const record = (stored: StoredKey): KeyRecord => toKeyRecord(stored, environments.environmentOf(stored.identity.prefix), pendingUse);

  return Object.freeze({
    async issue(input: IssueKeyInput): Promise<IssuedKey> {
      const now = clock();
      const { environment, ...fields } = validateIssueInput(input, now);
      const prefix = environment === null ? environments.defaultPrefix : environments.prefixOf(environment);
      if (prefix === undefined) {
        throw new KeysetError('invalid_request', {
          detail: `\`environment\` must be one of: ${Object.keys(environments.byName).join(', ')}.`,
          extensions: { field: 'environment' },
        });
      }
      const { key, secret } = await newSecret(now, prefix);
      const identity: StoredIdentity = {
        id: `key_${randomBase62((n) => crypto.randomBytes(n), 22)}`,
        ...fields,
        prefix,
        createdAt: new Date(now),
        revokedAt: null,
      };
      await storeCall(log, 'insertIdentity', () => store.insertIdentity(identity, secret));
      verifier.forgetRejection(secret.digest);
      return issuedKey(key, record({ identity, secrets: [secret] }));
    },

    async get(id: string): Promise<KeyRecord> {
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const stored = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (stored === undefined) throw notFound();
      return record(stored);
    },

    async list(plan: KeyListPlan): Promise<KeyListResult> {
      const { query, limit } = toListQuery(plan);
      const { keys, total } = await storeCall(log, 'listIdentities', () => store.listIdentities(query));
      const records = keys.slice(0, query.take).map(record);
      return total === undefined ? { records, hasMore: keys.length > limit } : { records, hasMore: keys.length > limit, total };
    },

    async rotate(id: string, rotateOptions: RotateKeyOptions): Promise<IssuedKey> {
      const overlapMs = validateOverlap(rotateOptions);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const now = clock();
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      if (current.identity.revokedAt !== null) {
        throw new KeysetError('invalid_request', { detail: 'A revoked key cannot be rotated; issue a new one.', extensions: { field: 'id' } });
      }
      if (time(current.identity.expiresAt) <= now) {
        throw new KeysetError('invalid_request', { detail: 'An expired key cannot be rotated; issue a new one.', extensions: { field: 'id' } });
      }
      // The new secret keeps the identity's environment. A prefix no longer configured would
      // make a key that cannot verify here.
      const prefix = current.identity.prefix ?? environments.defaultPrefix;
      if (!environments.prefixes.includes(prefix)) {
        throw new KeysetError('invalid_request', {
          detail: `This key's prefix (${prefix}) is no longer configured, so a rotated key could not verify; issue a new one.`,
          extensions: { field: 'id' },
        });
      }
      const { key, secret } = await newSecret(now, prefix);
      const endOthers = new Date(now + overlapMs);
      const added = await storeCall(log, 'addSecret', () => store.addSecret(id, secret, endOthers));
      if (!added) throw notFound();
      // Cached entries of the old secrets still carry their old expiry: drop every entry of
      // the identity now, the current secret (new overlap end) and any older one (ended now).
      verifier.evict(id);
      await changes.emit({ type: 'rotated', id });
      // The store applied the same rule (KeyStore.addSecret) to what it holds.
      const ends = rotationEnds(current.secrets, now, endOthers.getTime());
      const rotated: StoredKey = {
        identity: current.identity,
        secrets: [secret, ...current.secrets.map((s, n) => ({ ...s, expiresAt: ends[n] ?? null }))],
      };
      return issuedKey(key, record(rotated));
    },

    async update(id: string, input: UpdateKeyInput): Promise<KeyRecord> {
      const patch = validateUpdateInput(input);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      if (typeof store.updateIdentity !== 'function') {
        throw new KeysetError('unavailable', { detail: 'This key store cannot update keys.', cause: new Error('KeyStore.updateIdentity is not implemented') });
      }
      const updated = await storeCall(log, 'updateIdentity', () => store.updateIdentity!(id, patch));
      if (updated === undefined) throw notFound();
      // Cached verified keys carry the old metadata and allowlist: a narrower allowlist must
      // apply at once, here and (through the bus) on every other instance.
      verifier.evict(id);
      await changes.emit({ type: 'updated', id });
      return record(updated);
    },

    async revoke(id: string): Promise<void> {
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const revoked = await storeCall(log, 'revoke', () => store.revoke(id, new Date(clock())));
      if (!revoked) throw notFound();
      verifier.evict(id);
      await changes.emit({ type: 'revoked', id });
    },

    async updateLimits(id: string, input: UpdateLimitsInput): Promise<KeyRecord> {
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const update = store.updateLimits?.bind(store);
      if (update === undefined) throw new ConfigError('This key store cannot update limits (KeyStore.updateLimits is missing)');
      const now = clock();
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      const patch = validateLimitsPatch(input, current.identity.quota ?? null, now);
      const updated = await storeCall(log, 'updateLimits', () => update(id, patch));
      if (!updated) throw notFound();
      // Cached verified keys carry the old limits: drop them here, and on other instances.
      verifier.evict(id);
      await changes.emit({ type: 'updated', id });
      const after = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (after === undefined) throw notFound();
      return record(after);
    },
  });
}
