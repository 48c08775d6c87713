/**
 * The keyring's administration: issue, get, list, rotate, revoke and update keys, as
 * `createKeyAdmin(keyring)`. It works on the keyring's own store, caches and change
 * listeners, so every input is validated before the store is asked, and a revocation,
 * rotation or update evicts the identity's cached results here and tells the change
 * listeners (a revocation bus) before it resolves. A module of its own so that a service
 * that only verifies keys (an edge handler) does not bundle it.
 * @module
 */
import { auditEntry, changesBetween, keyFields, resolveAuditContext, secretFields, validateActor, type AuditContext, type ResolvedAuditContext } from '../audit/audit-entry.ts';
import type { AuditAction, AuditChange, AuditEntry } from '../audit/audit-store.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { randomBase62 } from '../internal/base62.ts';
import { toHex } from '../internal/hex.ts';
import { time } from '../keys/internal/key-validity.ts';
import { storeCall } from '../keys/internal/store-call.ts';
import { issuedKey, type IssuedKey } from './issued-key.ts';
import { generateKey } from '../keys/key-format.ts';
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
import { toKeyRecord, type KeyRecord } from '../keys/key-record.ts';
import { isRecordableLeakUrl, MAX_LEAK_URL_LENGTH } from './leak-url.ts';
import type { StoredIdentity, StoredKey, StoredSecret } from '../keys/key-store.ts';
import type { Keyring } from '../auth/keyring.ts';
import { rotationEnds } from '../keys/rotation-ends.ts';

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

/**
 * A keyring's administration. All methods reject with `KeysetError`s (`not_found` for an
 * unknown id, `invalid_request` for bad input, `unavailable` when the store fails).
 *
 * Every method that changes a key takes an optional last argument `context`
 * (`{ actor?, requestId? }`, see `AuditContext`): who asks, for the audit entry the store
 * writes with the change.
 */
export interface KeyAdmin {
  /** Issues a key: the key text (shown this once) and its record. */
  issue(input: IssueKeyInput, context?: AuditContext): Promise<IssuedKey>;
  /** The record of identity `id`; `not_found` when unknown. */
  get(id: string): Promise<KeyRecord>;
  /** One page of records, never a secret (`Paginator.page()` takes the result as it is). */
  list(plan: KeyListPlan): Promise<KeyListResult>;
  /**
   * Adds a new secret. The current one keeps verifying for `overlapSeconds` (never past its
   * own expiry); any older secret still inside an earlier overlap ends at once, so at most
   * two keys verify. `not_found` when unknown.
   */
  rotate(id: string, options: RotateKeyOptions, context?: AuditContext): Promise<IssuedKey>;
  /** Ends every secret of `id` now. `not_found` when unknown; revoking twice is fine. */
  revoke(id: string, context?: AuditContext): Promise<void>;
  /**
   * Replaces the metadata and/or IP allowlist of `id` (revoked or not), evicts its cached
   * results and tells the change listeners (a revocation bus carries it to every instance)
   * before it resolves. `not_found` when unknown.
   */
  update(id: string, input: UpdateKeyInput, context?: AuditContext): Promise<KeyRecord>;
  /**
   * Replaces the rate limits and/or the quota of `id` (a field left out is kept, `null`
   * removes it) and evicts its cached results here and, through `onChange`, on other
   * instances. Setting `quota` restarts its count at `quota.remaining`. `not_found` when
   * unknown; `invalid_request` for bad input.
   */
  updateLimits(id: string, input: UpdateLimitsInput, context?: AuditContext): Promise<KeyRecord>;
  /**
   * Records that key `id` was reported leaked (revoked or not), found at `leak.url`: sets
   * the record's `leakedAt` to now and `leakUrl` to the URL, unless the key was already
   * reported, whose first report is kept (both fields). The URL must be an http(s) URL of
   * at most 2048 characters holding no key-shaped text (`invalid_request`, field `url`);
   * `createLeakAlertHandler` cleans the alert's URL before it gets here. Needs a store with
   * `recordLeak`. `not_found` when unknown.
   */
  recordLeak(id: string, leak?: { url?: string | null }, context?: AuditContext): Promise<void>;
  /**
   * How many live secrets (neither expired nor revoked) each pepper made: every pepper of
   * the keyring, newest first, even at 0, then any other id the store holds. Drop an old
   * pepper from `peppers` once its count is 0. Needs a store with `countByPepper`.
   */
  pepperCounts(): Promise<PepperUsage[]>;
}

const ID_PATTERN = /^key_[0-9A-Za-z]{22}$/;

/** Options of `createKeyAdmin` and `createOwnerAdmin`. */
export interface AdminOptions {
  /**
   * The audit actor of a change whose `context` names none: who this admin acts for (e.g.
   * `cli`, a job's name). 1-128 characters, no control characters.
   * @default 'app'
   */
  actor?: string;
}

/** One line of `KeyAdmin.pepperCounts()`. */
export interface PepperUsage {
  /** The pepper's id (a fingerprint of the pepper, never the pepper); `null`: secrets stored before ids were kept. */
  pepperId: string | null;
  /** Its position in the keyring's `peppers` (0: newest); `null` when not one of them (its keys no longer verify here). */
  pepper: number | null;
  /** Live secrets under it. */
  count: number;
}

function notFound(): KeysetError {
  return new KeysetError('not_found', { detail: 'No API key with this id.' });
}

/**
 * The administration of `keyring` (made by `createKeyring`): issue, get, list, rotate,
 * revoke and update its keys, over the keyring's own store, caches and change listeners.
 * Call it once where keys are managed (admin routes, a CLI); a service that only verifies
 * keys does not need it, nor bundle its code. Throws `ConfigError` for anything but a
 * keyring from `createKeyring`.
 *
 * @example
 * ```ts
 * const keyring = createKeyring({ store, prefix: 'acme_live' });
 * const admin = createKeyAdmin(keyring);
 * const { key, record } = await admin.issue({ name: 'billing service', scopes: ['orders:read'] });
 * await admin.rotate(record.id, { overlapSeconds: 3600 }, { actor: 'alice', requestId: 'req_42' });
 * ```
 */
export function createKeyAdmin(keyring: Keyring, options: AdminOptions = {}): KeyAdmin {
  if (typeof keyring?.parts !== 'function') throw new ConfigError('createKeyAdmin needs a keyring made by createKeyring');
  assertKnownOptions('createKeyAdmin', options, ADMIN_OPTIONS);
  const defaultActor = adminActor(options.actor);
  const { config, log, writer, verifier, changes } = keyring.parts();
  const { store, environments, rawDigest, clock, crypto } = config;

  /** The entry recording `action` on key `id`, written by the store with the change. */
  // Each changing method resolves its context first, so a bad actor or request id is refused
  // before anything is read or changed.
  function entry(who: ResolvedAuditContext, at: number, action: AuditAction, id: string, fields: Record<string, AuditChange>): AuditEntry {
    return auditEntry(`aud_${randomBase62((n) => crypto.randomBytes(n), 22)}`, new Date(at), who, action, { type: 'key', id }, fields);
  }
  const fieldsOf = (identity: StoredIdentity): ReturnType<typeof keyFields> => keyFields(identity, environments.environmentOf(identity.prefix));

  async function newSecret(now: number, prefix: string): Promise<{ key: string; secret: StoredSecret }> {
    const key = generateKey(prefix, { crypto });
    const [digest, [pepperId = null]] = await Promise.all([rawDigest(key), config.peppers.ids()]);
    const secret: StoredSecret = { digest: toHex(digest), last4: key.slice(-4), createdAt: new Date(now), lastUsedAt: null, expiresAt: null, pepperId };
    return { key, secret };
  }

  const pendingUse = (digest: string): number | undefined => writer?.pending(digest);
  const record = (stored: StoredKey): KeyRecord => toKeyRecord(stored, environments.environmentOf(stored.identity.prefix), pendingUse);

  const noOwner = (): KeysetError =>
    new KeysetError('invalid_request', { detail: 'No owner with this `ownerId`; create the owner first.', extensions: { field: 'ownerId' } });

  return Object.freeze({
    async pepperCounts(): Promise<PepperUsage[]> {
      if (typeof store.countByPepper !== 'function') throw new ConfigError('This key store cannot count digests per pepper (KeyStore.countByPepper is missing)');
      const ids = await config.peppers.ids();
      const counts = await storeCall(log, 'countByPepper', () => store.countByPepper!(new Date(clock())));
      const countOf = (id: string | null): number => counts.find((c) => c.pepperId === id)?.count ?? 0;
      const others = counts.filter((c) => c.pepperId === null || !ids.includes(c.pepperId)).map((c) => ({ pepperId: c.pepperId, pepper: null, count: c.count }));
      return [...ids.map((pepperId, pepper) => ({ pepperId, pepper, count: countOf(pepperId) })), ...others];
    },

    async issue(input: IssueKeyInput, context?: AuditContext): Promise<IssuedKey> {
      const who = resolveAuditContext(context, defaultActor);
      const now = clock();
      const { environment, ...fields } = validateIssueInput(input, now);
      const prefix = environment === null ? environments.defaultPrefix : environments.prefixOf(environment);
      if (prefix === undefined) {
        throw new KeysetError('invalid_request', {
          detail: `\`environment\` must be one of: ${Object.keys(environments.byName).join(', ')}.`,
          extensions: { field: 'environment' },
        });
      }
      let ownerIncarnation: string | undefined;
      if (fields.ownerId !== null) {
        const ownerId = fields.ownerId;
        if (typeof store.getOwner !== 'function') throw new ConfigError('This key store keeps no owners (KeyStore.getOwner is missing)');
        const owner = await storeCall(log, 'getOwner', () => store.getOwner!(ownerId));
        if (owner === undefined) throw noOwner();
        ownerIncarnation = owner.incarnation;
      }
      const { key, secret } = await newSecret(now, prefix);
      const identity: StoredIdentity = {
        id: `key_${randomBase62((n) => crypto.randomBytes(n), 22)}`,
        ...fields,
        ...(ownerIncarnation === undefined ? {} : { ownerIncarnation }),
        prefix,
        createdAt: new Date(now),
        revokedAt: null,
      };
      const audit = entry(who, now, 'key.issued', identity.id, changesBetween(null, fieldsOf(identity)));
      const inserted = await storeCall(log, 'insertIdentity', () => store.insertIdentity(identity, secret, audit));
      // The owner was deleted (or deleted and created again) since it was read: the store
      // checked it in the same step as the insert and inserted nothing.
      if (inserted === false) throw noOwner();
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

    async rotate(id: string, rotateOptions: RotateKeyOptions, context?: AuditContext): Promise<IssuedKey> {
      const overlapMs = validateOverlap(rotateOptions);
      const who = resolveAuditContext(context, defaultActor);
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
      // The store applies the same rule (KeyStore.addSecret) to what it holds.
      const ends = rotationEnds(current.secrets, now, endOthers.getTime());
      const rotated: StoredKey = {
        identity: current.identity,
        secrets: [secret, ...current.secrets.map((s, n) => ({ ...s, expiresAt: ends[n] ?? null }))],
      };
      const audit = entry(who, now, 'key.rotated', id, { secrets: { before: secretFields(current.secrets), after: secretFields(rotated.secrets) } });
      const added = await storeCall(log, 'addSecret', () => store.addSecret(id, secret, endOthers, audit));
      if (!added) throw notFound();
      // Cached entries of the old secrets still carry their old expiry: drop every entry of
      // the identity now, the current secret (new overlap end) and any older one (ended now).
      verifier.evict(id);
      await changes.emit({ type: 'rotated', id });
      return issuedKey(key, record(rotated));
    },

    async update(id: string, input: UpdateKeyInput, context?: AuditContext): Promise<KeyRecord> {
      const patch = validateUpdateInput(input);
      const who = resolveAuditContext(context, defaultActor);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      if (typeof store.updateIdentity !== 'function') {
        throw new KeysetError('unavailable', { detail: 'This key store cannot update keys.', cause: new Error('KeyStore.updateIdentity is not implemented') });
      }
      // Read first for the entry's `before`; the write itself stays one atomic store call.
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      const audit = entry(who, clock(), 'key.updated', id, changesBetween(fieldsOf(current.identity), fieldsOf({ ...current.identity, ...patch })));
      const updated = await storeCall(log, 'updateIdentity', () => store.updateIdentity!(id, patch, audit));
      if (updated === undefined) throw notFound();
      // Cached verified keys carry the old metadata and allowlist: a narrower allowlist must
      // apply at once, here and (through the bus) on every other instance.
      verifier.evict(id);
      await changes.emit({ type: 'updated', id });
      return record(updated);
    },

    async revoke(id: string, context?: AuditContext): Promise<void> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      const now = clock();
      // Revoking keeps the first instant (KeyStore.revoke): a second revocation changes nothing.
      const revokedAt = current.identity.revokedAt ?? new Date(now);
      const audit = entry(who, now, 'key.revoked', id, changesBetween(fieldsOf(current.identity), fieldsOf({ ...current.identity, revokedAt })));
      const revoked = await storeCall(log, 'revoke', () => store.revoke(id, new Date(now), audit));
      if (!revoked) throw notFound();
      verifier.evict(id);
      await changes.emit({ type: 'revoked', id });
    },

    async recordLeak(id: string, leak: { url?: string | null } = {}, context?: AuditContext): Promise<void> {
      const who = resolveAuditContext(context, defaultActor);
      const url = leak?.url ?? null;
      if (url !== null && !isRecordableLeakUrl(url)) {
        throw new KeysetError('invalid_request', {
          detail: `\`url\` must be an http(s) URL of at most ${MAX_LEAK_URL_LENGTH} characters, holding no key text.`,
          extensions: { field: 'url' },
        });
      }
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      if (typeof store.recordLeak !== 'function') throw new ConfigError('This key store cannot record leaks (KeyStore.recordLeak is missing)');
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      const now = clock();
      // The first report is kept (KeyStore.recordLeak): a later one changes nothing.
      const reported = current.identity.leakedAt ?? null;
      const after = reported === null ? { ...current.identity, leakedAt: new Date(now), leakUrl: url } : current.identity;
      const audit = entry(who, now, 'key.leaked', id, changesBetween(fieldsOf(current.identity), fieldsOf(after)));
      const recorded = await storeCall(log, 'recordLeak', () => store.recordLeak!(id, new Date(now), url, audit));
      if (!recorded) throw notFound();
    },

    async updateLimits(id: string, input: UpdateLimitsInput, context?: AuditContext): Promise<KeyRecord> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw notFound();
      const update = store.updateLimits?.bind(store);
      if (update === undefined) throw new ConfigError('This key store cannot update limits (KeyStore.updateLimits is missing)');
      const now = clock();
      const current = await storeCall(log, 'getIdentity', () => store.getIdentity(id));
      if (current === undefined) throw notFound();
      const patch = validateLimitsPatch(input, current.identity.quota ?? null, now);
      const next: StoredIdentity = { ...current.identity };
      if (patch.rateLimits !== undefined) {
        const first = patch.rateLimits?.[0];
        next.rateLimits = patch.rateLimits;
        next.rateLimit = first === undefined ? null : { limit: first.limit, windowSeconds: first.windowSeconds };
      }
      if (patch.quota !== undefined) next.quota = patch.quota;
      const audit = entry(who, now, 'key.limits_updated', id, changesBetween(fieldsOf(current.identity), fieldsOf(next)));
      const updated = await storeCall(log, 'updateLimits', () => update(id, patch, audit));
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

/** Every name `AdminOptions` knows, checked when an admin is made. */
export const ADMIN_OPTIONS: KnownOptions<AdminOptions> = Object.freeze({ actor: true });

/** The admin's default actor (`AdminOptions.actor`), checked when the admin is made. */
export function adminActor(actor: unknown = 'app'): string {
  try {
    return validateActor(actor);
  } catch {
    throw new ConfigError('`actor` must be 1-128 characters without control characters, e.g. "app" or "cli"');
  }
}
