/**
 * Row ↔ record conversion, independent of how a driver parses types.
 *
 * Timestamps leave PostgreSQL as epoch milliseconds (`float8`) and enter it as ISO 8601
 * strings cast to `timestamptz`, so neither the driver's Date parsing nor the session
 * `TimeZone` nor the Node process time zone can shift them. Arrays and secrets leave as
 * JSON. Drivers that leave `json`/`float8` unparsed (strings) work too.
 * @module
 */
import type { KeyMetadata, KeyRateLimit, Quota, QuotaPatch } from '@keyset/core';
import type { StoredOwner } from '@keyset/core';
import type { StoredIdentity, StoredSecret } from '@keyset/core/adapter';

/** SQL: a timestamptz column as epoch milliseconds. */
export function epochMs(column: string): string {
  return `(extract(epoch FROM ${column}) * 1000)::float8`;
}

/** A Date (or null) as a `timestamptz` parameter. Throws RangeError on an invalid Date. */
export function timestampParam(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return new Date(value.getTime());
  // Math.round: before PostgreSQL 14, extract() returns float8 and `* 1000` may be off by a hair.
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Math.round(Number(value)));
  if (typeof value === 'string') return new Date(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value) ? Math.round(Number(value)) : value);
  throw new TypeError(`expected a timestamp, got ${typeof value}`);
}

function requiredDate(value: unknown): Date {
  const date = toDate(value);
  if (date === null) throw new TypeError('expected a timestamp, got null');
  return date;
}

function json(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** SQL: the identity columns of alias `i`, as read by `identityFrom`. */
export function identityColumns(): string {
  // metadata::text: some drivers parse `json` and some do not; text is read alike by all.
  return `i.id, i.name, to_json(i.scopes) AS scopes, i.rate_limit, i.rate_window_seconds, i.rate_limits, i.quota,
    i.prefix, i.metadata::text AS metadata, to_json(i.ip_allowlist) AS ip_allowlist,
    ${epochMs('i.created_at')} AS created_at, ${epochMs('i.expires_at')} AS expires_at,
    ${epochMs('i.revoked_at')} AS revoked_at, i.owner_id, i.owner_incarnation, ${epochMs('i.leaked_at')} AS leaked_at, i.leak_url`;
}

/** SQL: the columns of owner `o` (LEFT JOINed: all NULL when the key names no owner row), read by `ownerFrom`. */
export function ownerColumns(): string {
  return `o.id AS owner_row_id, o.incarnation AS owner_incarnation_of_row, o.metadata::text AS owner_metadata, o.rate_limits AS owner_rate_limits, o.quota AS owner_quota,
    ${epochMs('o.created_at')} AS owner_created_at, ${epochMs('o.disabled_at')} AS owner_disabled_at`;
}

/** An owner from `ownerColumns()` (or the same names without `owner_`), `null` when the join found none. */
export function ownerFrom(row: Record<string, unknown>, prefix = 'owner_'): StoredOwner | null {
  const id = row[prefix === '' ? 'id' : 'owner_row_id'];
  if (id === null || id === undefined) return null;
  return {
    id: String(id),
    incarnation: String(row[prefix === '' ? 'incarnation' : 'owner_incarnation_of_row']),
    metadata: metadataFrom(row[`${prefix}metadata`]),
    rateLimits: rateLimitsFrom(row[`${prefix}rate_limits`]),
    quota: quotaFrom(row[`${prefix}quota`]),
    createdAt: requiredDate(row[`${prefix}created_at`]),
    disabledAt: toDate(row[`${prefix}disabled_at`]),
  };
}

/** SQL: every secret of identity `i`, newest first, as a JSON array read by `secretsFrom`. */
export function secretsColumn(secrets: string): string {
  return `coalesce((
      SELECT json_agg(json_build_object(
        'digest', s.digest, 'last4', s.last4, 'createdAt', ${epochMs('s.created_at')},
        'lastUsedAt', ${epochMs('s.last_used_at')}, 'expiresAt', ${epochMs('s.expires_at')}, 'pepperId', s.pepper_id
      ) ORDER BY s.created_at DESC, s.seq DESC)
      FROM ${secrets} s WHERE s.identity_id = i.id
    ), '[]'::json) AS secrets`;
}

/** SQL: the secret columns of alias `s`, prefixed `secret_`, as read by `secretFrom(row, 'secret_')`. */
export function secretColumns(): string {
  return `s.digest AS secret_digest, s.last4 AS secret_last4, ${epochMs('s.created_at')} AS secret_created_at,
    ${epochMs('s.last_used_at')} AS secret_last_used_at, ${epochMs('s.expires_at')} AS secret_expires_at, s.pepper_id AS secret_pepper_id`;
}

/** The metadata column (text), parsed; a missing one (an old row read mid-upgrade) is `{}`. */
function metadataFrom(value: unknown): KeyMetadata {
  if (value === null || value === undefined) return {};
  const parsed = json(value);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as KeyMetadata) : {};
}

export function identityFrom(row: Record<string, unknown>): StoredIdentity {
  const limit = row['rate_limit'];
  return {
    id: String(row['id']),
    name: String(row['name']),
    scopes: (json(row['scopes']) as unknown[]).map(String),
    rateLimit:
      limit === null || limit === undefined
        ? null
        : { limit: Number(limit), windowSeconds: Number(row['rate_window_seconds']) },
    prefix: row['prefix'] === null || row['prefix'] === undefined ? null : String(row['prefix']),
    metadata: metadataFrom(row['metadata']),
    ipAllowlist: row['ip_allowlist'] === null || row['ip_allowlist'] === undefined ? null : (json(row['ip_allowlist']) as unknown[]).map(String),
    rateLimits: rateLimitsFrom(row['rate_limits']),
    quota: quotaFrom(row['quota']),
    // Present only when set, as the memory store gives it back.
    ...(row['owner_id'] === null || row['owner_id'] === undefined ? {} : { ownerId: String(row['owner_id']) }),
    ...(row['owner_id'] === null || row['owner_id'] === undefined || typeof row['owner_incarnation'] !== 'string' ? {} : { ownerIncarnation: row['owner_incarnation'] }),
    ...(row['leaked_at'] === null || row['leaked_at'] === undefined
      ? {}
      : { leakedAt: requiredDate(row['leaked_at']), leakUrl: typeof row['leak_url'] === 'string' ? row['leak_url'] : null }),
    createdAt: requiredDate(row['created_at']),
    expiresAt: toDate(row['expires_at']),
    revokedAt: toDate(row['revoked_at']),
  };
}

function rateLimitsFrom(value: unknown): KeyRateLimit[] | null {
  if (value === null || value === undefined) return null;
  return (json(value) as Record<string, unknown>[]).map((l) => ({
    limit: Number(l['limit']),
    windowSeconds: Number(l['windowSeconds']),
    ...(typeof l['name'] === 'string' ? { name: l['name'] } : {}),
    ...(l['burst'] === undefined || l['burst'] === null ? {} : { burst: Number(l['burst']) }),
    ...(l['mode'] === 'observe' ? { mode: 'observe' as const } : {}),
  }));
}

function quotaFrom(value: unknown): Quota | null {
  if (value === null || value === undefined) return null;
  const q = json(value) as { remaining: unknown; refill: { amount: unknown; interval: unknown } | null; setAt: unknown; mode?: unknown };
  const refill = q.refill ?? null;
  return {
    remaining: Number(q.remaining),
    refill: refill === null ? null : { amount: Number(refill.amount), interval: typeof refill.interval === 'string' ? (refill.interval as 'daily' | 'monthly') : Number(refill.interval) },
    setAt: requiredDate(q.setAt),
    ...(q.mode === 'observe' ? { mode: 'observe' as const } : {}),
  };
}

/** JSON parameters of the `rate_limits` and `quota` columns. */
export function limitsParams(identity: Pick<StoredIdentity, 'rateLimit' | 'rateLimits' | 'quota'>): [string | null, string | null] {
  const list = identity.rateLimits ?? (identity.rateLimit === null ? null : [identity.rateLimit]);
  return [list === null ? null : JSON.stringify(list), quotaParam(identity.quota ?? null)];
}

/** JSON parameter of a `quota` column (an identity's or an owner's): `{ remaining, refill, setAt, mode? }`, setAt in epoch ms, `mode` only when `'observe'`. */
export function quotaParam(quota: Quota | null): string | null {
  return quota === null ? null : JSON.stringify({ remaining: quota.remaining, refill: quota.refill, setAt: quota.setAt.getTime(), ...(quota.mode === 'observe' ? { mode: 'observe' } : {}) });
}

/** JSON parameter of an owner update's quota: as `quotaParam`, without `refill` (or `mode`) when the patch leaves it out. */
export function quotaPatchParam(patch: QuotaPatch): string {
  return JSON.stringify({
    remaining: patch.remaining,
    ...(patch.refill === undefined ? {} : { refill: patch.refill }),
    setAt: patch.setAt.getTime(),
    ...(patch.mode === undefined ? {} : { mode: patch.mode }),
  });
}

export function secretFromColumns(row: Record<string, unknown>): StoredSecret {
  return {
    digest: String(row['secret_digest']),
    last4: String(row['secret_last4']),
    createdAt: requiredDate(row['secret_created_at']),
    lastUsedAt: toDate(row['secret_last_used_at']),
    expiresAt: toDate(row['secret_expires_at']),
    ...pepperIdFrom(row['secret_pepper_id']),
  };
}

export function secretsFrom(value: unknown): StoredSecret[] {
  return (json(value) as Record<string, unknown>[]).map((s) => ({
    digest: String(s['digest']),
    last4: String(s['last4']),
    createdAt: requiredDate(s['createdAt']),
    lastUsedAt: toDate(s['lastUsedAt']),
    expiresAt: toDate(s['expiresAt']),
    ...pepperIdFrom(s['pepperId']),
  }));
}

/**
 * The pepper_id column as a `pepperId` member, left out when NULL (a secret written before
 * schema version 7, or by a caller that gave none), as the memory store does.
 */
function pepperIdFrom(value: unknown): { pepperId?: string } {
  return typeof value === 'string' ? { pepperId: value } : {};
}

/** A boolean column, whether or not the driver parses booleans. */
export function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}
