/**
 * Owners: the customer (team, tenant) several keys belong to, as `createOwnerAdmin(keyring)`.
 * An owner's rate limits and quota are shared by all its keys and decided together with
 * each key's own, all-or-nothing; its metadata reaches the handler
 * beside the key's. Disabling or deleting an owner refuses every key it owns at once: the
 * keyring's cached results of those keys are dropped here, and the change listeners (a
 * revocation bus) carry `owner:<id>` to every other instance before the call resolves,
 * with the same acknowledgement as a key revocation.
 * @module
 */
import { auditEntry, changesBetween, ownerFields, resolveAuditContext, type AuditContext, type ResolvedAuditContext } from '../audit/audit-entry.ts';
import type { AuditAction, AuditChange, AuditEntry } from '../audit/audit-store.ts';
import { ConfigError, KeysetError } from '../errors.ts';
import { randomBase62 } from '../internal/base62.ts';
import { storeCall } from '../keys/internal/store-call.ts';
import { assertKnownOptions } from '../internal/check-options.ts';
import { ADMIN_OPTIONS, adminActor, type AdminOptions, type KeyListResult } from './key-admin.ts';
import type { Quota } from '../quota/types.ts';
import { toListQuery, validateOwnerId, validateQuota, validateQuotaMode, validateQuotaPatch, validateRateLimits, type KeyListPlan, type QuotaInput } from './key-input.ts';
import { validateMetadata, freezeMetadata, type KeyMetadata } from '../keys/key-metadata.ts';
import { applyQuotaPatch, modeSwitched } from '../keys/quota-patch.ts';
import type { LimitMode } from '../rate-limit/limit-mode.ts';
import { frozenQuota, quotaJson, toKeyRecord, type KeyRateLimit } from '../keys/key-record.ts';
import type { KeyStore, OwnerPatch, StoredOwner } from '../keys/key-store.ts';
import type { Keyring } from '../auth/keyring.ts';
import { OWNER_EVICTION_PREFIX } from '../auth/key-verifier.ts';

/** An owner as administrators see it. */
export interface OwnerRecord {
  readonly id: string;
  readonly metadata: KeyMetadata;
  /** Rate limits all its keys share, decided with each key's own; `null` = none. */
  readonly rateLimits: readonly KeyRateLimit[] | null;
  /**
   * Usage quota all its keys spend from, beside each key's own (both or neither), as last
   * set (`remaining` at `setAt`); the live count is in the quota store
   * (`limiter.readOwnerQuota(id, quota)`). `null` = none.
   */
  readonly quota: Quota | null;
  readonly createdAt: Date;
  /** Set while the owner is disabled (none of its keys verifies); `null` = enabled. */
  readonly disabledAt: Date | null;
}

/** What `OwnerAdmin.create` takes. */
export interface CreateOwnerInput {
  /** The application's own id for the customer: 1-128 of `A-Z a-z 0-9 _ . : -`, not `.` or `..`. */
  id: string;
  /** @default {} */
  metadata?: KeyMetadata | null;
  /** Rate limits all its keys share (named, as a key's are; headers show them as `owner.<name>`). */
  rateLimits?: readonly KeyRateLimit[] | null;
  /** A usage quota all its keys spend from, shaped and checked as a key's (`IssueKeyInput.quota`). `null`/absent = none. */
  quota?: QuotaInput | null;
}

/** What `OwnerAdmin.update` changes; a field left out is kept. */
export interface UpdateOwnerInput {
  metadata?: KeyMetadata | null;
  /** `null` removes them. */
  rateLimits?: readonly KeyRateLimit[] | null;
  /**
   * The new quota (`null` removes it), as `UpdateLimitsInput.quota` for a key: `refill` left
   * out keeps the current refill, and setting it restarts the count at `remaining` from now.
   */
  quota?: QuotaInput | null;
  /** Switches the owner's quota between `'enforce'` and `'observe'` (shadow mode), its count kept, as `UpdateLimitsInput.quotaMode` does a key's. */
  quotaMode?: LimitMode;
  /** `true` refuses every key of the owner until set back to `false`. */
  disabled?: boolean;
}

/** One page of owners, newest first, as `Paginator.page()` takes it (see `KeyListResult`). */
export interface OwnerListResult {
  records: OwnerRecord[];
  hasMore: boolean;
  total?: number;
}

/**
 * Owner administration. Rejects with `not_found`, `invalid_request` (bad input, or an id
 * taken) or `unavailable`. Every changing method takes an optional last argument `context`
 * (`{ actor?, requestId? }`) for the audit entry the store writes with the change.
 */
export interface OwnerAdmin {
  create(input: CreateOwnerInput, context?: AuditContext): Promise<OwnerRecord>;
  get(id: string): Promise<OwnerRecord>;
  list(plan: KeyListPlan): Promise<OwnerListResult>;
  /** Changes metadata, rate limits, quota or the disabled flag; every instance drops its cached keys of the owner before it resolves. */
  update(id: string, input: UpdateOwnerInput, context?: AuditContext): Promise<OwnerRecord>;
  /** Deletes the owner and revokes all its keys; every instance refuses them before it resolves. */
  delete(id: string, context?: AuditContext): Promise<void>;
  /** One page of the owner's keys (`not_found` for an unknown owner). */
  listKeys(id: string, plan: KeyListPlan): Promise<KeyListResult>;
}

type OwnerStore = Required<Pick<KeyStore, 'insertOwner' | 'getOwner' | 'listOwners' | 'updateOwner' | 'deleteOwner'>>;

function notFound(): KeysetError {
  return new KeysetError('not_found', { detail: 'No owner with this id.' });
}

function invalid(field: string, detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field } });
}

function toOwnerRecord(owner: StoredOwner): OwnerRecord {
  const rateLimits = owner.rateLimits === null || owner.rateLimits.length === 0 ? null : Object.freeze(owner.rateLimits.map((l) => Object.freeze({ ...l })));
  const record = {
    id: owner.id,
    metadata: freezeMetadata(owner.metadata),
    rateLimits,
    quota: frozenQuota(owner.quota ?? null),
    createdAt: new Date(owner.createdAt.getTime()),
    disabledAt: owner.disabledAt === null ? null : new Date(owner.disabledAt.getTime()),
  };
  Object.defineProperty(record, 'toJSON', {
    value: () => ({
      ...record,
      rateLimits: rateLimits === null ? null : rateLimits.map((l) => ({ ...l })),
      quota: quotaJson(record.quota),
      createdAt: record.createdAt.toISOString(), disabledAt: record.disabledAt?.toISOString() ?? null,
    }),
  });
  return Object.freeze(record);
}

/** An owner id from a route or a caller: `not_found` for anything no owner can have. */
function ownerIdOrNotFound(id: unknown): string {
  try {
    return validateOwnerId(id, 'id');
  } catch {
    throw notFound();
  }
}

/** The owner's limits: like a key's list, at least one, distinct names. */
function ownerLimits(value: unknown): KeyRateLimit[] | null {
  if (value === undefined || value === null) return null;
  return validateRateLimits({ rateLimits: value }).rateLimits ?? null;
}

/**
 * The owner administration of `keyring` (made by `createKeyring`), over its store (which
 * must keep owners: the memory store and `@keyset/postgres` do). Throws `ConfigError` otherwise.
 *
 * @example
 * ```ts
 * const owners = createOwnerAdmin(keyring);
 * await owners.create({ id: 'cus_42', metadata: { plan: 'pro' }, rateLimits: [{ name: 'minute', limit: 600, windowSeconds: 60 }] });
 * const { key } = await createKeyAdmin(keyring).issue({ name: 'ci', scopes: ['orders:read'], ownerId: 'cus_42' });
 * await owners.update('cus_42', { disabled: true }); // every key of cus_42 refused, on every instance
 * ```
 */
export function createOwnerAdmin(keyring: Keyring, options: AdminOptions = {}): OwnerAdmin {
  if (typeof keyring?.parts !== 'function') throw new ConfigError('createOwnerAdmin needs a keyring made by createKeyring');
  assertKnownOptions('createOwnerAdmin', options, ADMIN_OPTIONS);
  const defaultActor = adminActor(options.actor);
  const { config, log, writer, verifier, changes } = keyring.parts();
  const { environments, clock, crypto } = config;

  /** The entry recording `action` on owner `id`, written by the store with the change. */
  // Each changing method resolves its context first, so a bad actor or request id is refused
  // before anything is read or changed.
  function entry(who: ResolvedAuditContext, at: number, action: AuditAction, id: string, fields: Record<string, AuditChange>): AuditEntry {
    return auditEntry(`aud_${randomBase62((n) => crypto.randomBytes(n), 22)}`, new Date(at), who, action, { type: 'owner', id }, fields);
  }
  const store = config.store as KeyStore & Partial<OwnerStore>;
  for (const method of ['insertOwner', 'getOwner', 'listOwners', 'updateOwner', 'deleteOwner'] as const) {
    if (typeof store[method] !== 'function') throw new ConfigError(`This key store keeps no owners (KeyStore.${method} is missing)`);
  }
  const owners = store as KeyStore & OwnerStore;

  /** Drops the owner's keys from the caches here, then on every other instance (acknowledged). */
  async function evictOwner(id: string, type: 'updated' | 'revoked'): Promise<void> {
    verifier.evict(OWNER_EVICTION_PREFIX + id);
    await changes.emit({ type, id: OWNER_EVICTION_PREFIX + id });
  }

  async function getOwner(id: string): Promise<StoredOwner> {
    const owner = await storeCall(log, 'getOwner', () => owners.getOwner(id));
    if (owner === undefined) throw notFound();
    return owner;
  }

  return Object.freeze({
    async create(input: CreateOwnerInput, context?: AuditContext): Promise<OwnerRecord> {
      const who = resolveAuditContext(context, defaultActor);
      if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `id`.');
      const id = validateOwnerId(input.id, 'id');
      const now = clock();
      const quota = input.quota === undefined || input.quota === null ? null : validateQuota(input.quota, null, now);
      const owner: StoredOwner = {
        id,
        incarnation: `inc_${randomBase62((n) => crypto.randomBytes(n), 22)}`,
        metadata: validateMetadata(input.metadata),
        rateLimits: ownerLimits(input.rateLimits),
        quota,
        createdAt: new Date(now),
        disabledAt: null,
      };
      const audit = entry(who, now, 'owner.created', id, changesBetween(null, ownerFields(owner)));
      const created = await storeCall(log, 'insertOwner', () => owners.insertOwner(owner, audit));
      if (!created) throw invalid('id', 'An owner with this id exists already.');
      return toOwnerRecord(owner);
    },

    async get(id: string): Promise<OwnerRecord> {
      return toOwnerRecord(await getOwner(ownerIdOrNotFound(id)));
    },

    async list(plan: KeyListPlan): Promise<OwnerListResult> {
      const { query, limit } = toListQuery(plan);
      const { owners: rows, total } = await storeCall(log, 'listOwners', () => owners.listOwners(query));
      const records = rows.slice(0, query.take).map(toOwnerRecord);
      return total === undefined ? { records, hasMore: rows.length > limit } : { records, hasMore: rows.length > limit, total };
    },

    async update(id: string, input: UpdateOwnerInput, context?: AuditContext): Promise<OwnerRecord> {
      const who = resolveAuditContext(context, defaultActor);
      const ownerId = ownerIdOrNotFound(id);
      if (typeof input !== 'object' || input === null) throw invalid('body', 'Send an object with `metadata`, `rateLimits`, `quota` and/or `disabled`.');
      const patch: OwnerPatch = {};
      if (input.metadata !== undefined) patch.metadata = validateMetadata(input.metadata);
      if (input.rateLimits !== undefined) patch.rateLimits = ownerLimits(input.rateLimits);
      // The store merges the quota with the current one (`refill` left out is kept) and keeps
      // the first instant of an owner disabled twice, in the same write: reading the owner
      // here first would let two updates at once overwrite each other.
      if (input.quota === null) patch.quota = null;
      else if (input.quota !== undefined) patch.quota = validateQuotaPatch(input.quota, clock());
      // Checked against the owner read below (the store switches what it holds then, keeping the count).
      const quotaMode = validateQuotaMode(input.quotaMode, input.quota, undefined);
      if (quotaMode !== undefined) patch.quotaMode = quotaMode;
      if (input.disabled !== undefined) {
        if (typeof input.disabled !== 'boolean') throw invalid('disabled', '`disabled` must be true or false.');
        patch.disabledAt = input.disabled ? new Date(clock()) : null;
      }
      if (Object.keys(patch).length === 0) throw invalid('body', 'Send `metadata`, `rateLimits`, `quota`, `quotaMode` and/or `disabled` to change.');
      // The entry's `before` is read first, its `after` computed as the store merges (a
      // concurrent update of the same owner may make `before` a moment old; the write stays atomic).
      const current = await getOwner(ownerId);
      if (patch.quotaMode !== undefined) validateQuotaMode(patch.quotaMode, undefined, current.quota ?? null);
      const { quota, disabledAt } = patch;
      const next: StoredOwner = {
        ...current,
        ...(patch.metadata === undefined ? {} : { metadata: patch.metadata }),
        ...(patch.rateLimits === undefined ? {} : { rateLimits: patch.rateLimits }),
        quota: quota ? applyQuotaPatch(current.quota ?? null, quota) : quota === null ? null : modeSwitched(current.quota ?? null, patch.quotaMode),
        disabledAt: disabledAt === null ? null : (current.disabledAt ?? disabledAt ?? null),
      };
      // Disabling is its own action (it refuses every key of the owner); enabling is an update.
      const action = current.disabledAt === null && next.disabledAt !== null ? 'owner.disabled' : 'owner.updated';
      const audit = entry(who, clock(), action, ownerId, changesBetween(ownerFields(current), ownerFields(next)));
      const updated = await storeCall(log, 'updateOwner', () => owners.updateOwner(ownerId, patch, audit));
      if (updated === undefined) throw notFound();
      await evictOwner(ownerId, patch.disabledAt !== undefined && patch.disabledAt !== null ? 'revoked' : 'updated');
      return toOwnerRecord(updated);
    },

    async delete(id: string, context?: AuditContext): Promise<void> {
      const who = resolveAuditContext(context, defaultActor);
      const ownerId = ownerIdOrNotFound(id);
      const current = await getOwner(ownerId);
      const now = clock();
      const audit = entry(who, now, 'owner.deleted', ownerId, changesBetween(ownerFields(current), null));
      const deleted = await storeCall(log, 'deleteOwner', () => owners.deleteOwner(ownerId, new Date(now), audit));
      if (!deleted) throw notFound();
      await evictOwner(ownerId, 'revoked');
    },

    async listKeys(id: string, plan: KeyListPlan): Promise<KeyListResult> {
      const ownerId = ownerIdOrNotFound(id);
      const { query, limit } = toListQuery(plan);
      await getOwner(ownerId);
      const { keys, total } = await storeCall(log, 'listIdentities', () => owners.listIdentities({ ...query, ownerId }));
      const pending = (digest: string): number | undefined => writer?.pending(digest);
      const records = keys.slice(0, query.take).map((k) => toKeyRecord(k, environments.environmentOf(k.identity.prefix), pending));
      return total === undefined ? { records, hasMore: keys.length > limit } : { records, hasMore: keys.length > limit, total };
    },
  });
}
