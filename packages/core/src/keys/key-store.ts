/**
 * The storage contract of the keyring. Implemented in memory (core) and on PostgreSQL
 * (`@keyset/postgres`). Stores hold digests, never key text.
 * @module
 */
import type { AuditEntry } from '../audit/audit-store.ts';
import type { Quota } from '../quota/types.ts';
import type { LimitMode, RateLimitPolicy } from '../rate-limit/types.ts';
import type { KeyMetadata } from './key-metadata.ts';
import type { QuotaPatch } from './quota-patch.ts';

/** One secret of an identity: what a key string verifies against. */
export interface StoredSecret {
  /** Lowercase hex SHA-256 (or HMAC-SHA256 with the pepper) of the full key string. */
  digest: string;
  /** Last 4 characters of the key, safe to show. */
  last4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** End of validity: set by rotation (overlap end), revocation or issue-time expiry. */
  expiresAt: Date | null;
  /**
   * Id of the pepper that made `digest` (during a pepper rotation, which keys are still
   * to re-hash); `null`/absent: written before stores kept it.
   */
  pepperId?: string | null;
}

/** One lazy re-hash: the secret stored under digest `from` is stored under `to`, made by pepper `pepperId`. */
export interface PepperRehash {
  from: string;
  to: string;
  pepperId: string;
}

/** How many live secrets (neither expired nor revoked, at the time asked) a pepper made. */
export interface PepperCount {
  /** `null`: secrets written before the store kept pepper ids. */
  pepperId: string | null;
  count: number;
}

/** A key identity: who the caller is, what it may do, how fast. */
export interface StoredIdentity {
  /** Opaque id, not derivable from the key (e.g. `key_` + 22 base62). */
  id: string;
  name: string;
  scopes: string[];
  /** The first of `rateLimits` (kept for stores and readers from before several limits). */
  rateLimit: Pick<RateLimitPolicy, 'limit' | 'windowSeconds'> | null;
  /**
   * Prefix of the identity's keys (its environment); every secret, rotations included,
   * has it. `null`: written before stores kept it (PostgreSQL schema < 5), which means the
   * keyring's default prefix.
   */
  prefix: string | null;
  /** Operator data returned on verification: a JSON object, `{}` when none (see `validateMetadata`). */
  metadata: KeyMetadata;
  /** Canonical CIDR blocks the key may be used from; `null` = any address. */
  ipAllowlist: readonly string[] | null;
  /**
   * Every rate limit of the identity, decided together; `null`/absent = the limiter's default.
   * When absent, `rateLimit` alone applies.
   */
  rateLimits?: Pick<RateLimitPolicy, 'limit' | 'windowSeconds' | 'name' | 'burst' | 'mode'>[] | null;
  /** Usage quota as an administrator set it; `null`/absent = none. */
  quota?: Quota | null;
  /**
   * The owner the key belongs to (an id the application chose, see `StoredOwner`);
   * `null`/absent = none. The owner's limits apply beside the key's.
   */
  ownerId?: string | null;
  /**
   * The `incarnation` of the owner row the key was issued for (see `StoredOwner`). The
   * store inserts the key only while that row still exists, and hands the owner to a found
   * key only while the row with `ownerId` is that incarnation: a later owner created with
   * the same id never owns, and so never revives, a key issued for an earlier one.
   * `null`/absent (a key written before stores kept it): the owner row owns the key when
   * it was created no later than the key.
   */
  ownerIncarnation?: string | null;
  /**
   * When the key was first reported leaked (a secret-scanning alert, `KeyStore.recordLeak`);
   * `null`/absent = never.
   */
  leakedAt?: Date | null;
  /**
   * Where that first report said the key was found: an http(s) URL, checked and cleaned of
   * key text before it is stored; `null`/absent = none given (or never reported).
   */
  leakUrl?: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/**
 * An owner: the customer (or team, or tenant) several keys belong to. Its rate limits
 * are shared by all its keys and decided together with each key's own; disabling or
 * deleting it refuses every key it owns.
 */
export interface StoredOwner {
  /** Chosen by the application (e.g. its customer id): 1-128 of `A-Z a-z 0-9 _ . : -`, not `.` or `..`. */
  id: string;
  /**
   * What tells this owner apart from an earlier or later owner created with the same id:
   * random, set when the owner is created and never changed (`createOwnerAdmin` makes
   * one; a store given none makes one). Keys record it (`StoredIdentity.ownerIncarnation`).
   */
  incarnation?: string;
  /** Operator data handed to the handler with each request: a JSON object, `{}` when none. */
  metadata: KeyMetadata;
  /** Rate limits all the owner's keys share; `null` = none. */
  rateLimits: Pick<RateLimitPolicy, 'limit' | 'windowSeconds' | 'name' | 'burst' | 'mode'>[] | null;
  /**
   * Usage quota all the owner's keys spend from, beside each key's own, as an administrator
   * set it (the count lives in the quota store as `owner:<id>`); `null`/absent = none.
   */
  quota?: Quota | null;
  createdAt: Date;
  /** Set while the owner is disabled: none of its keys verifies. */
  disabledAt: Date | null;
}

/** An identity with all of its secrets, newest first. */
export interface StoredKey {
  identity: StoredIdentity;
  secrets: StoredSecret[];
}

/** Keyset page request for listing identities: newest first (`createdAt DESC, id DESC`). */
export interface ListIdentitiesQuery {
  /** Rows to fetch: page size + 1, so the caller can tell whether there is more. */
  take: number;
  /** Offset mode: rows to skip. */
  offset?: number;
  /** Cursor mode: the identity to list strictly after, in `direction`'s order. */
  after?: { createdAt: Date; id: string };
  /**
   * Cursor mode: `'forward'` lists newest first (identities older than `after`);
   * `'backward'` lists oldest first (identities newer than `after`, or the oldest ones
   * without it), for a page reached through a `prevCursor`.
   * @default 'forward'
   */
  direction?: 'forward' | 'backward';
  /** Whether to count all identities (offset mode's `total`). */
  withTotal?: boolean;
  /** Only the identities of this owner (`StoredIdentity.ownerId`). */
  ownerId?: string;
}

/** Keyset page request for listing owners: newest first (`createdAt DESC, id DESC`), as for identities. */
export type ListOwnersQuery = Omit<ListIdentitiesQuery, 'ownerId'>;

/**
 * What `KeyStore.updateOwner` changes; a field left out is kept. `quota.refill` left out
 * keeps the stored quota's refill (none when there is no quota), and `quota.setAt` is
 * moved to one millisecond after the stored quota's when it is not later (see
 * `applyQuotaPatch`). `disabledAt` as a date disables an owner that is not disabled yet
 * and keeps the instant of an owner that is; `null` enables.
 */
export interface OwnerPatch extends Partial<Pick<StoredOwner, 'metadata' | 'rateLimits'>> {
  quota?: QuotaPatch | null;
  /**
   * Switches the stored quota's mode and nothing else (its `setAt`, so its count, is kept);
   * no quota: nothing changes. Not together with `quota`.
   */
  quotaMode?: LimitMode;
  disabledAt?: Date | null;
}

/**
 * The persistence a keyring needs. Every method may reject; the keyring maps that to 503.
 *
 * **Audit.** Every changing method takes an optional last argument `audit`, the entry that
 * records the change (built by `createKeyAdmin`/`createOwnerAdmin`). A store that keeps an
 * audit log writes it in the SAME transaction as the change, and only when the change
 * applies (not for an unknown id): a failing append changes nothing, and a failing change
 * appends nothing. A store without a log ignores it.
 */
export interface KeyStore {
  /**
   * Creates an identity with its first secret. With an `ownerId`, the check that the owner
   * row (of `ownerIncarnation`) exists and the insert are ONE step, serialised with
   * `deleteOwner`: either the key is inserted before the delete (which then revokes it) or
   * nothing is inserted and the store resolves `false`.
   */
  insertIdentity(identity: StoredIdentity, secret: StoredSecret, audit?: AuditEntry): Promise<boolean | void>;
  /**
   * Rotation, as ONE atomic operation: adds `secret` (as given) and ends the identity's
   * other secrets so that at most two verify from then on: the new one and the one it
   * replaces. With `now = secret.createdAt` (the rotation instant):
   * - the **current** secret, i.e. the newest one still live at `now` (`expiresAt` null or
   *   after `now`; newest by `createdAt`, then by insertion, as `getIdentity` lists them),
   *   gets `expiresAt = min(its own expiresAt, expireOthersAt)`: the overlap;
   * - every **other** secret gets `expiresAt = min(its own expiresAt, now)`: an older
   *   secret still inside an earlier rotation's overlap ends at once.
   *
   * No end is ever extended. `expireOthersAt = now` (overlap 0) ends every secret but the
   * new one at once. Concurrent rotations of one identity must serialise, so the rule holds
   * whatever order they run in. Resolves `false` (changing nothing) if the identity does
   * not exist or is revoked.
   */
  addSecret(identityId: string, secret: StoredSecret, expireOthersAt: Date, audit?: AuditEntry): Promise<boolean>;
  /**
   * The identity and matching secret for a digest, or `undefined`. Ignores validity: the
   * keyring decides. A store that keeps owners also returns the identity's owner (`null`
   * when its `ownerId` names none, e.g. a deleted one, or names an owner row of another
   * incarnation, see `StoredIdentity.ownerIncarnation`; the keyring refuses both).
   */
  findByDigest(digest: string): Promise<FoundKey | undefined>;
  /**
   * `findByDigest` for several candidate digests at once (one per pepper, newest first),
   * in ONE lookup: the secret whose digest is any of them (at most one is stored). Optional:
   * a keyring with more than one pepper needs it, so an unknown key costs one lookup.
   */
  findByDigests?(digests: readonly string[]): Promise<FoundKey | undefined>;
  /**
   * Pepper rotation's re-hash: for each change, the secret stored under `from` gets digest
   * `to` and `pepperId`, keeping everything else; a `from` no longer stored is skipped.
   * Optional: a keyring with more than one pepper needs it.
   */
  rehashDigests?(changes: readonly PepperRehash[]): Promise<void>;
  /** Live secrets per pepper id at `now` (see `PepperCount`). Optional: `createKeyAdmin(keyring).pepperCounts()` needs it. */
  countByPepper?(now: Date): Promise<PepperCount[]>;
  getIdentity(id: string): Promise<StoredKey | undefined>;
  listIdentities(query: ListIdentitiesQuery): Promise<{ keys: StoredKey[]; total?: number }>;
  /** Sets `revokedAt` and ends every secret at `at`. Resolves `false` when unknown. */
  revoke(id: string, at: Date, audit?: AuditEntry): Promise<boolean>;
  /**
   * Replaces the given fields of identity `id` (revoked or not) and returns the key as it
   * now is, or `undefined` when unknown. Optional for stores written before it existed:
   * without it `Keyring.update` answers 503.
   */
  updateIdentity?(id: string, changes: Partial<Pick<StoredIdentity, 'metadata' | 'ipAllowlist'>>, audit?: AuditEntry): Promise<StoredKey | undefined>;
  /**
   * Replaces the identity's rate limits and/or quota (a field left out is kept). Resolves
   * `false` when the identity does not exist. Optional for stores written before 0.2;
   * `Keyring.updateLimits` needs it.
   */
  updateLimits?(id: string, patch: IdentityLimitsPatch, audit?: AuditEntry): Promise<boolean>;
  /**
   * Records that identity `id` was reported leaked at `at`, found at `url` (already checked:
   * see `KeyAdmin.recordLeak`). The first report is kept: when `leakedAt` is already set,
   * neither field changes (atomically, so two reports at once keep one of them whole).
   * Revoked or not alike. Resolves `false` when the identity does not exist. Optional for
   * stores written before it; `createLeakAlertHandler` needs it.
   */
  recordLeak?(id: string, at: Date, url: string | null, audit?: AuditEntry): Promise<boolean>;
  /** Creates an owner; resolves `false` (changing nothing) when its id is taken. Owner methods are optional: `createOwnerAdmin` needs them. */
  insertOwner?(owner: StoredOwner, audit?: AuditEntry): Promise<boolean>;
  getOwner?(id: string): Promise<StoredOwner | undefined>;
  listOwners?(query: ListOwnersQuery): Promise<{ owners: StoredOwner[]; total?: number }>;
  /**
   * Applies `patch` (see `OwnerPatch`) and returns the owner as it now is, or `undefined`
   * when unknown, as ONE atomic operation: the quota merge and the first `disabledAt` are
   * decided against the stored owner in the same write, so two updates at once never
   * both see an owner enabled and overwrite each other's instant.
   */
  updateOwner?(id: string, patch: OwnerPatch, audit?: AuditEntry): Promise<StoredOwner | undefined>;
  /**
   * Deletes the owner and, in the same transaction, revokes every identity it owns at
   * `at` (as `revoke` does), so none of its keys verifies again; serialised with
   * `insertIdentity`, so no key for the owner is inserted after it. Resolves `false` when unknown.
   */
  deleteOwner?(id: string, at: Date, audit?: AuditEntry): Promise<boolean>;
  /** Creates a role; resolves `false` (changing nothing) when its name is taken. Role methods are optional: `createRoleAdmin` needs them. */
  insertRole?(role: StoredRole, audit?: AuditEntry): Promise<boolean>;
  getRole?(name: string): Promise<StoredRole | undefined>;
  /** Every role, by name. */
  listRoles?(): Promise<StoredRole[]>;
  /** Applies `patch` and returns the role as it now is, or `undefined` when unknown. */
  updateRole?(name: string, patch: RolePatch, audit?: AuditEntry): Promise<StoredRole | undefined>;
  /** Deletes the role and, in the same transaction, takes it from every key and owner that holds it. Resolves `false` when unknown. */
  deleteRole?(name: string, audit?: AuditEntry): Promise<boolean>;
  /**
   * Replaces the roles of a key or an owner with `roles` (distinct names), as ONE atomic
   * operation serialised with `deleteRole`: `'not_found'` when the key or owner does not
   * exist, `'unknown_role'` when a name is not a role (changing nothing in either case).
   * An owner's roles belong to its incarnation: an owner created again under a deleted id
   * starts with none.
   */
  setRoles?(target: RoleTarget, roles: readonly string[], audit?: AuditEntry): Promise<'set' | 'not_found' | 'unknown_role'>;
  /** The role names of a key or an owner, by name; `undefined` when it does not exist. */
  rolesOf?(target: RoleTarget): Promise<string[] | undefined>;
  /** Batched last-use write; never moves a timestamp backwards (`GREATEST`). */
  touchLastUsed(updates: readonly { digest: string; at: Date }[]): Promise<void>;
  close?(): Promise<void>;
}

/**
 * What `findByDigest` finds. A store that keeps roles also returns `roles`: every role the
 * key holds, its own and its owner's (a role held both ways may come twice).
 */
export interface FoundKey {
  identity: StoredIdentity;
  secret: StoredSecret;
  owner?: StoredOwner | null;
  roles?: readonly Pick<StoredRole, 'name' | 'permissions'>[];
}

/** A role: permissions (scopes) the application bundles under a name, held by keys and owners. */
export interface StoredRole {
  /** 1-64 of `A-Z a-z 0-9 _ . : -`. */
  name: string;
  /** Scope tokens; every key holding the role holds them. */
  permissions: string[];
  /** Free text for administrators; `''` when none. */
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What `KeyStore.updateRole` changes; a field left out is kept. */
export interface RolePatch {
  permissions?: string[];
  description?: string;
  updatedAt: Date;
}

/** Whose roles `KeyStore.setRoles` and `rolesOf` read or change: a key's (by identity id) or an owner's. */
export interface RoleTarget {
  type: 'key' | 'owner';
  id: string;
}

/** What `KeyStore.updateLimits` changes; a field left out is kept. */
export interface IdentityLimitsPatch {
  rateLimits?: Pick<RateLimitPolicy, 'limit' | 'windowSeconds' | 'name' | 'burst' | 'mode'>[] | null;
  quota?: Quota | null;
}
