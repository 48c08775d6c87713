/**
 * The public views of a key: `KeyRecord` for administration (never a digest, never key
 * text) and `VerifiedKey` for a request that passed. Both come from prototypes with a
 * non-enumerable `toJSON` and Node's `inspect.custom` hook (by its registered symbol, no
 * Node import), so logging one shows only safe fields, and spreading one
 * (`{ key, ...record }`) copies data properties only.
 * @module
 */
import { NODE_INSPECT } from '../internal/node-inspect.ts';
import type { Quota, QuotaRefill } from '../quota/types.ts';
import type { RateLimitPolicy } from '../rate-limit/types.ts';
import { freezeMetadata, type KeyMetadata } from './key-metadata.ts';
import type { StoredIdentity, StoredKey, StoredOwner, StoredSecret } from './key-store.ts';

/** A rate limit as stored on an identity: `limit` per `windowSeconds`, optionally named and with a burst. */
export type KeyRateLimit = Pick<RateLimitPolicy, 'limit' | 'windowSeconds' | 'name' | 'burst' | 'mode'>;

/** `JSON.stringify` form of a `Quota`: `remaining` is the count as set at `setAt`. */
export interface QuotaJson {
  remaining: number;
  refill: QuotaRefill | null;
  setAt: string;
  /** `'observe'`: a shadow quota (see `Quota.mode`); absent: enforced. */
  mode?: 'observe';
}

/** One secret of a key, as administrators see it. Dates are `Date`; JSON has ISO strings. */
export interface SecretRecord {
  readonly last4: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  /** Set by rotation (end of the overlap) or revocation. */
  readonly expiresAt: Date | null;
}

/** A key identity with its secrets (newest first), as administrators see it. */
export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  /** The first of `rateLimits` (deprecated: read `rateLimits`). */
  readonly rateLimit: KeyRateLimit | null;
  /** The environment its keys belong to (see `KeyringOptions.prefix`). */
  readonly environment: string;
  /** Operator data set at issue or update: a JSON object, `{}` when none. */
  readonly metadata: KeyMetadata;
  /** CIDR blocks (canonical) the key may be used from; `null` = any address. */
  readonly ipAllowlist: readonly string[] | null;
  /** Every rate limit of the key, decided together; `null` = the limiter's default. */
  readonly rateLimits: readonly KeyRateLimit[] | null;
  /**
   * The usage quota as last set (`remaining` at `setAt`); the live count is in the quota
   * store (`limiter.readQuota(id, quota, ownerId)`). `null` = no quota.
   */
  readonly quota: Quota | null;
  /** The owner the key belongs to, or `null`. */
  readonly ownerId: string | null;
  /**
   * When the key was first reported leaked (a secret-scanning alert, with either policy);
   * `null` = never. A later report of the same key leaves it as it is.
   */
  readonly leakedAt: Date | null;
  /**
   * Where that first report said the key was found (an http(s) URL, at most 2048
   * characters, cleaned of key text); `null` when it gave none, or gave one that was refused.
   */
  readonly leakUrl: string | null;
  readonly createdAt: Date;
  /** Latest use over all secrets. */
  readonly lastUsedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly secrets: readonly SecretRecord[];
}

/** `JSON.stringify` form of a `SecretRecord`. */
export interface SecretRecordJson {
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

/** `JSON.stringify` form of a `KeyRecord`: camelCase, ISO 8601 timestamps. */
export interface KeyRecordJson {
  id: string;
  name: string;
  scopes: string[];
  rateLimit: KeyRateLimit | null;
  environment: string;
  metadata: KeyMetadata;
  ipAllowlist: string[] | null;
  rateLimits: KeyRateLimit[] | null;
  quota: QuotaJson | null;
  ownerId: string | null;
  leakedAt: string | null;
  leakUrl: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  secrets: SecretRecordJson[];
}

/** The caller a request was authenticated as. Safe to log: the key shows as its last 4. */
export interface VerifiedKey {
  /** Identity id: the same for every secret, so rate limits and audit follow it. */
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  /** The first of `rateLimits` (deprecated: read `rateLimits`). */
  readonly rateLimit: KeyRateLimit | null;
  /** The environment of the presented key, named by its prefix (see `KeyringOptions.prefix`). */
  readonly environment: string;
  /** Operator data set at issue or update (deeply frozen): a JSON object, `{}` when none. */
  readonly metadata: KeyMetadata;
  /** CIDR blocks (canonical) the key may be used from; `null` = any address. */
  readonly ipAllowlist: readonly string[] | null;
  /** Every rate limit of the key, decided together; `null` = the limiter's default. */
  readonly rateLimits: readonly KeyRateLimit[] | null;
  /** The usage quota as last set, or `null`. */
  readonly quota: Quota | null;
  /** The owner the key belongs to, or `null` (same as `owner?.id`). */
  readonly ownerId: string | null;
  /** The owner with its metadata and shared limits (deeply frozen), or `null`. */
  readonly owner: VerifiedOwner | null;
  /** Last 4 characters of the key that was presented. */
  readonly last4: string;
}

/** The owner of a verified key, as the handler sees it. */
export interface VerifiedOwner {
  readonly id: string;
  /** Operator data set on the owner (deeply frozen): a JSON object, `{}` when none. */
  readonly metadata: KeyMetadata;
  /** Rate limits all the owner's keys share, decided with the key's own; `null` = none. */
  readonly rateLimits: readonly KeyRateLimit[] | null;
  /** Usage quota all the owner's keys spend from, with each key's own (both or neither); `null` = none. */
  readonly quota: Quota | null;
}

/** `JSON.stringify` form of a `VerifiedKey`. */
export interface VerifiedKeyJson {
  id: string;
  name: string;
  scopes: string[];
  rateLimit: KeyRateLimit | null;
  environment: string;
  metadata: KeyMetadata;
  ipAllowlist: string[] | null;
  rateLimits: KeyRateLimit[] | null;
  quota: QuotaJson | null;
  ownerId: string | null;
  owner: { id: string; metadata: KeyMetadata; rateLimits: KeyRateLimit[] | null; quota: QuotaJson | null } | null;
  last4: string;
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The JSON form of a quota (`setAt` as ISO 8601), `null` for none. */
export function quotaJson(quota: Quota | null): QuotaJson | null {
  if (quota === null) return null;
  const json: QuotaJson = { remaining: quota.remaining, refill: quota.refill === null ? null : { ...quota.refill }, setAt: quota.setAt.toISOString() };
  if (quota.mode === 'observe') json.mode = 'observe';
  return json;
}

/** A frozen copy of a list of limits; `null` for none or an empty list. */
function frozenLimits(list: readonly KeyRateLimit[] | null | undefined): readonly KeyRateLimit[] | null {
  return list === null || list === undefined || list.length === 0
      ? null
      : Object.freeze(
          list.map((l) =>
            Object.freeze({
              limit: l.limit,
              windowSeconds: l.windowSeconds,
              ...(l.name === undefined ? {} : { name: l.name }),
              ...(l.burst === undefined ? {} : { burst: l.burst }),
              ...(l.mode === 'observe' ? { mode: l.mode } : {}),
            }),
          ),
        );
}

/** Frozen copies of an identity's limits: its list, else its single legacy limit, else `null`. */
function limitsOf(identity: StoredIdentity): { rateLimit: KeyRateLimit | null; rateLimits: readonly KeyRateLimit[] | null; quota: Quota | null } {
  const rateLimits = frozenLimits(identity.rateLimits ?? (identity.rateLimit === null ? null : [identity.rateLimit]));
  return { rateLimit: rateLimits?.[0] ?? null, rateLimits, quota: frozenQuota(identity.quota ?? null) };
}

/** A frozen copy of a key's or an owner's quota, or `null`. */
export function frozenQuota(q: Quota | null): Quota | null {
  if (q === null) return null;
  return Object.freeze({
    remaining: q.remaining,
    refill: q.refill === null ? null : Object.freeze({ amount: q.refill.amount, interval: q.refill.interval }),
    setAt: new Date(q.setAt.getTime()),
    ...(q.mode === 'observe' ? { mode: q.mode } : {}),
  });
}

function secretJson(this: SecretRecord): SecretRecordJson {
  return { last4: this.last4, createdAt: this.createdAt.toISOString(), lastUsedAt: iso(this.lastUsedAt), expiresAt: iso(this.expiresAt) };
}

function recordJson(this: KeyRecord): KeyRecordJson {
  return {
    id: this.id,
    name: this.name,
    scopes: [...this.scopes],
    rateLimit: this.rateLimit === null ? null : { ...this.rateLimit },
    environment: this.environment,
    metadata: this.metadata,
    ipAllowlist: this.ipAllowlist === null ? null : [...this.ipAllowlist],
    rateLimits: this.rateLimits === null ? null : this.rateLimits.map((l) => ({ ...l })),
    quota: quotaJson(this.quota),
    ownerId: this.ownerId,
    leakedAt: iso(this.leakedAt),
    leakUrl: this.leakUrl,
    createdAt: this.createdAt.toISOString(),
    lastUsedAt: iso(this.lastUsedAt),
    expiresAt: iso(this.expiresAt),
    revokedAt: iso(this.revokedAt),
    secrets: this.secrets.map((s) => secretJson.call(s)),
  };
}

function verifiedJson(this: VerifiedKey): VerifiedKeyJson {
  return {
    id: this.id,
    name: this.name,
    scopes: [...this.scopes],
    rateLimit: this.rateLimit === null ? null : { ...this.rateLimit },
    environment: this.environment,
    metadata: this.metadata,
    ipAllowlist: this.ipAllowlist === null ? null : [...this.ipAllowlist],
    rateLimits: this.rateLimits === null ? null : this.rateLimits.map((l) => ({ ...l })),
    quota: quotaJson(this.quota),
    ownerId: this.ownerId,
    owner:
      this.owner === null
        ? null
        : {
            id: this.owner.id,
            metadata: this.owner.metadata,
            rateLimits: this.owner.rateLimits === null ? null : this.owner.rateLimits.map((l) => ({ ...l })),
            quota: quotaJson(this.owner.quota),
          },
    last4: this.last4,
  };
}

function proto(json: (this: never) => unknown, label: string): object {
  return Object.freeze(
    Object.create(Object.prototype, {
      toJSON: { value: json },
      [NODE_INSPECT]: {
        value(this: never, _depth: unknown, options: unknown, inspect?: (value: unknown, options: unknown) => string) {
          const data = (json as (this: unknown) => unknown).call(this);
          return typeof inspect === 'function' ? `${label} ${inspect(data, options)}` : data;
        },
      },
    }),
  );
}

// Pure: an app that never builds a `KeyRecord` (a service that only verifies) bundles
// neither its prototype nor its `toJSON`.
const SECRET_PROTO = /* @__PURE__ */ proto(secretJson as (this: never) => unknown, 'SecretRecord');
const RECORD_PROTO = /* @__PURE__ */ proto(recordJson as (this: never) => unknown, 'KeyRecord');
const VERIFIED_PROTO = /* @__PURE__ */ proto(verifiedJson as (this: never) => unknown, 'VerifiedKey');

function withProto<T extends object>(prototype: object, data: T): T {
  return Object.freeze(Object.assign(Object.create(prototype) as T, data));
}

/** Tolerates a custom store that predates the field (`undefined`). */
const frozenList = (list: readonly string[] | null | undefined): readonly string[] | null => (list ? Object.freeze([...list]) : null);
const copyDate = (d: Date | null): Date | null => (d === null ? null : new Date(d.getTime()));
const later = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a >= b ? a : b);

/**
 * Builds the administrator's view of a stored key. `pendingLastUse` (digest → epoch ms)
 * adds uses seen by this process but not yet written, so the record is never behind.
 */
export function toKeyRecord(
  stored: StoredKey,
  environment: string,
  pendingLastUse?: (digest: string) => number | undefined,
): KeyRecord {
  const { identity } = stored;
  let lastUsedAt: Date | null = null;
  const secrets = stored.secrets.map((s: StoredSecret): SecretRecord => {
    const pending = pendingLastUse?.(s.digest);
    const used = later(copyDate(s.lastUsedAt), pending === undefined ? null : new Date(pending));
    lastUsedAt = later(lastUsedAt, used);
    return withProto<SecretRecord>(SECRET_PROTO, {
      last4: s.last4,
      createdAt: new Date(s.createdAt.getTime()),
      lastUsedAt: used,
      expiresAt: copyDate(s.expiresAt),
    });
  });
  return withProto<KeyRecord>(RECORD_PROTO, {
    id: identity.id,
    name: identity.name,
    scopes: Object.freeze([...identity.scopes]),
    ...limitsOf(identity),
    ownerId: identity.ownerId ?? null,
    leakedAt: copyDate(identity.leakedAt ?? null),
    leakUrl: identity.leakUrl ?? null,
    environment,
    metadata: freezeMetadata(identity.metadata),
    ipAllowlist: frozenList(identity.ipAllowlist),
    createdAt: new Date(identity.createdAt.getTime()),
    lastUsedAt,
    expiresAt: copyDate(identity.expiresAt),
    revokedAt: copyDate(identity.revokedAt),
    secrets: Object.freeze(secrets),
  });
}

/** Distinct scope lists one verifier shares between its keys before new ones get their own copy. */
const MAX_SHARED_SCOPE_LISTS = 1024;

/** Turns a stored scope list into the frozen list a `VerifiedKey` holds. */
export type ScopeLists = (scopes: readonly string[]) => readonly string[];

/**
 * Scope lists shared by the keys of one verifier (the instance keeps them): a frozen copy
 * of `scopes`, the same one for every key with the same list (keys of a fleet mostly hold
 * a few distinct lists), so the scope check on each request reads one list that stays in
 * the CPU cache, not one per key. Keyed by the list's JSON, which no two different lists
 * share; bounded, after which each key gets its own copy.
 */
export function createScopeLists(): ScopeLists {
  const lists = new Map<string, readonly string[]>();
  return (scopes) => {
    const id = JSON.stringify(scopes);
    let list = lists.get(id);
    if (list === undefined) {
      list = Object.freeze([...scopes]);
      if (lists.size < MAX_SHARED_SCOPE_LISTS) lists.set(id, list);
    }
    return list;
  };
}

/** Each key its own frozen copy of its scopes. */
const ownScopes: ScopeLists = (scopes) => Object.freeze([...scopes]);

/** The frozen owner a `VerifiedKey` carries. */
export function toVerifiedOwner(owner: StoredOwner): VerifiedOwner {
  return Object.freeze({ id: owner.id, metadata: freezeMetadata(owner.metadata), rateLimits: frozenLimits(owner.rateLimits), quota: frozenQuota(owner.quota ?? null) });
}

/**
 * Builds the frozen `VerifiedKey` a cache entry hands out to every request; its scopes
 * from `scopeLists`, its owner from `owner` (`null`: none).
 */
export function toVerifiedKey(
  stored: Pick<StoredKey, 'identity'>,
  environment: string,
  last4: string,
  scopeLists: ScopeLists = ownScopes,
  owner: VerifiedOwner | null = null,
): VerifiedKey {
  const { identity } = stored;
  return withProto<VerifiedKey>(VERIFIED_PROTO, {
    id: identity.id,
    name: identity.name,
    scopes: scopeLists(identity.scopes),
    ...limitsOf(identity),
    environment,
    metadata: freezeMetadata(identity.metadata),
    ipAllowlist: frozenList(identity.ipAllowlist),
    ownerId: identity.ownerId ?? null,
    owner,
    last4,
  });
}
