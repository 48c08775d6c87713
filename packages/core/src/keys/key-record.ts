/**
 * The public views of a key: `KeyRecord` for administration (never a digest, never key
 * text) and `VerifiedKey` for a request that passed. Both come from prototypes with a
 * non-enumerable `toJSON` and Node's `inspect.custom` hook (by its registered symbol, no
 * Node import), so logging one shows only safe fields, and spreading one
 * (`{ key, ...record }`) copies data properties only.
 * @module
 */
import type { RateLimitPolicy } from '../rate-limit/types.ts';
import { freezeMetadata, type KeyMetadata } from './key-metadata.ts';
import type { StoredKey, StoredSecret } from './key-store.ts';

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/** A rate limit as stored on an identity. */
export type KeyRateLimit = Pick<RateLimitPolicy, 'limit' | 'windowSeconds'>;

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
  readonly rateLimit: KeyRateLimit | null;
  /** The environment its keys belong to (see `KeyringOptions.prefix`). */
  readonly environment: string;
  /** Operator data set at issue or update: a JSON object, `{}` when none. */
  readonly metadata: KeyMetadata;
  /** CIDR blocks (canonical) the key may be used from; `null` = any address. */
  readonly ipAllowlist: readonly string[] | null;
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
  readonly rateLimit: KeyRateLimit | null;
  /** The environment of the presented key, named by its prefix (see `KeyringOptions.prefix`). */
  readonly environment: string;
  /** Operator data set at issue or update (deeply frozen): a JSON object, `{}` when none. */
  readonly metadata: KeyMetadata;
  /** CIDR blocks (canonical) the key may be used from; `null` = any address. */
  readonly ipAllowlist: readonly string[] | null;
  /** Last 4 characters of the key that was presented. */
  readonly last4: string;
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
  last4: string;
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

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
    last4: this.last4,
  };
}

function proto(json: (this: never) => unknown, label: string): object {
  return Object.freeze(
    Object.create(Object.prototype, {
      toJSON: { value: json },
      [INSPECT]: {
        value(this: never, _depth: unknown, options: unknown, inspect?: (value: unknown, options: unknown) => string) {
          const data = (json as (this: unknown) => unknown).call(this);
          return typeof inspect === 'function' ? `${label} ${inspect(data, options)}` : data;
        },
      },
    }),
  );
}

const SECRET_PROTO = proto(secretJson as (this: never) => unknown, 'SecretRecord');
const RECORD_PROTO = proto(recordJson as (this: never) => unknown, 'KeyRecord');
const VERIFIED_PROTO = proto(verifiedJson as (this: never) => unknown, 'VerifiedKey');

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
    rateLimit: identity.rateLimit === null ? null : Object.freeze({ limit: identity.rateLimit.limit, windowSeconds: identity.rateLimit.windowSeconds }),
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

/** Builds the frozen `VerifiedKey` a cache entry hands out to every request. */
export function toVerifiedKey(stored: Pick<StoredKey, 'identity'>, environment: string, last4: string): VerifiedKey {
  const { identity } = stored;
  return withProto<VerifiedKey>(VERIFIED_PROTO, {
    id: identity.id,
    name: identity.name,
    scopes: Object.freeze([...identity.scopes]),
    rateLimit: identity.rateLimit === null ? null : Object.freeze({ limit: identity.rateLimit.limit, windowSeconds: identity.rateLimit.windowSeconds }),
    environment,
    metadata: freezeMetadata(identity.metadata),
    ipAllowlist: frozenList(identity.ipAllowlist),
    last4,
  });
}
