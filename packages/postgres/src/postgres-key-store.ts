/**
 * `KeyStore` on PostgreSQL. Every method is ONE statement, so nothing needs a
 * transaction API or a pinned connection: a node-postgres `Pool` may run each call on a
 * different connection, and rotation is still atomic (a statement is its own transaction).
 * A change's audit entry is inserted by the same statement (a `WITH` member), so the
 * change and its entry commit or roll back together.
 * @module
 */
import { ConfigError } from '@keyset/core';
import type { AuditEntry, FoundKey, KeyStore, ListOwnersQuery, OwnerPatch, RolePatch, RoleTarget, StoredOwner, StoredRole } from '@keyset/core';
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { IdentityLimitsPatch, ListIdentitiesQuery, PepperCount, PepperRehash, StoredIdentity, StoredKey, StoredSecret } from '@keyset/core/adapter';
import { auditInsertCte, withAudit } from './internal/audit-rows.ts';
import { tableNames } from './internal/identifiers.ts';
import {
  epochMs,
  identityColumns,
  identityFrom,
  ownerColumns,
  ownerFrom,
  quotaParam,
  quotaPatchParam,
  limitsParams,
  secretColumns,
  secretFromColumns,
  secretsColumn,
  secretsFrom,
  timestampParam,
} from './internal/rows.ts';
import { runQuery } from './internal/run-query.ts';
import type { TableOptions } from './migrate.ts';
import type { Queryable } from './queryable.ts';

/** Options of `createPostgresKeyStore`. */
export interface PostgresKeyStoreOptions extends TableOptions {
  /**
   * Any `{ query(text, params) }` client: node-postgres `Pool` or `Client`, PGlite.
   * The store never ends it: the caller owns its lifecycle.
   */
  client: Queryable;
}

/** Every name `PostgresKeyStoreOptions` knows, checked when the store is made. */
const KEY_STORE_OPTIONS = { client: true, schema: true, tablePrefix: true } as const satisfies KnownOptions<PostgresKeyStoreOptions>;

/** A boolean column, whether or not the driver parses booleans. */
/** The `roles` column of a found key: `[{ name, permissions }]` as JSON text. */
function rolesFrom(text: string): Pick<StoredRole, 'name' | 'permissions'>[] {
  return (JSON.parse(text) as { name: unknown; permissions: unknown[] }[]).map((role) => ({ name: String(role.name), permissions: role.permissions.map(String) }));
}

function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/**
 * What a page of a list over the `(created_at DESC, id DESC)` index needs, for keys and for
 * owners alike: the direction checked and turned into the comparison and order (backward, a
 * page reached through a prevCursor, reads the same index the other way), `take` and `offset`
 * checked, and a parameter list with its `$n` placeholder maker.
 */
function pageQuery(query: { take: number; offset?: number | undefined; direction?: 'forward' | 'backward' | undefined }): {
  cmp: '<' | '>';
  order: 'DESC' | 'ASC';
  params: unknown[];
  param: (value: unknown) => string;
} {
  const { take, offset, direction = 'forward' } = query;
  if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`direction must be 'forward' or 'backward'`);
  checkCount('take', take);
  checkCount('offset', offset);
  const params: unknown[] = [];
  return { cmp: direction === 'forward' ? '<' : '>', order: direction === 'forward' ? 'DESC' : 'ASC', params, param: (value) => `$${params.push(value)}` };
}

/**
 * A key store over PostgreSQL tables created by `migrate()`. A failing database rejects
 * with `KeysetError('unavailable')` (503), the scrubbed driver error as `cause`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool }), prefix: 'acme_live' });
 * ```
 */
export function createPostgresKeyStore(options: PostgresKeyStoreOptions): KeyStore {
  assertKnownOptions('createPostgresKeyStore', options, KEY_STORE_OPTIONS);
  const { client, schema = 'public', tablePrefix = 'keyset_' } = options;
  if (typeof client?.query !== 'function') {
    throw new ConfigError('client must have a query(text, params) method, e.g. a node-postgres Pool or a PGlite instance');
  }
  const t = tableNames(schema, tablePrefix);

  // A key with an owner is inserted only while the owner row of its incarnation exists, read
  // with FOR KEY SHARE in the same statement: the weakest lock a DELETE waits for, so an
  // owner's UPDATE (a disable, say) does not wait for key issues. That lock and the owner
  // delete's row lock (migration 13's delete_owner) serialise the two: a delete that comes
  // first leaves no row to lock (nothing is inserted), an insert that comes first is
  // committed before the delete goes on, and the delete's revocation, on a fresh snapshot,
  // sees and revokes the new key. A key given no incarnation gets the rule of findByDigestSql.
  const insertIdentityCte = `
    WITH owner_row AS (
      SELECT 1 FROM ${t.owners}
      WHERE id = $20::text AND (incarnation = $23::text OR ($23::text IS NULL AND created_at <= $6::timestamptz))
      FOR KEY SHARE
    ), identity AS (
      INSERT INTO ${t.identities} (id, name, scopes, rate_limit, rate_window_seconds, created_at, expires_at, revoked_at, prefix, metadata, ip_allowlist, rate_limits, quota, owner_id, leaked_at, leak_url, owner_incarnation)
      SELECT $1, $2, $3::text[], $4::integer, $5::float8, $6::timestamptz, $7::timestamptz, $8::timestamptz, $14, $15::json, $16::text[], $17::jsonb, $18::jsonb, $20::text, $21::timestamptz, $22::text, $23::text
      WHERE $20::text IS NULL OR EXISTS (SELECT 1 FROM owner_row)
      RETURNING id
    ), secret AS (
      INSERT INTO ${t.secrets} (digest, identity_id, last4, created_at, last_used_at, expires_at, pepper_id)
      SELECT $9, id, $10, $11::timestamptz, $12::timestamptz, $13::timestamptz, $19::text FROM identity
      RETURNING digest
    )`;
  const insertedSelect = 'SELECT count(*) AS inserted FROM identity';
  const insertIdentitySql = `${insertIdentityCte} ${insertedSelect}`;

  /** `insertIdentitySql` with `audit`'s row inserted by the same statement (its parameters pushed onto `params`). */
  function insertIdentityWithAuditSql(audit: AuditEntry, params: unknown[]): string {
    const param = (value: unknown): string => `$${params.push(value)}`;
    return `${insertIdentityCte}, ${auditInsertCte(t, audit, param, 'EXISTS (SELECT 1 FROM identity)')} ${insertedSelect}`;
  }

  // Replaces the given fields ($2/$3 say which) and returns the key as it now is.
  const updateIdentityCte = `
    WITH i AS (
      UPDATE ${t.identities} SET
        metadata = CASE WHEN $2::boolean THEN $3::json ELSE metadata END,
        ip_allowlist = CASE WHEN $4::boolean THEN $5::text[] ELSE ip_allowlist END
      WHERE id = $1
      RETURNING *
    )`;
  const updatedIdentitySelect = `SELECT ${identityColumns()}, ${secretsColumn(t.secrets)} FROM i`;

  // Rotation: the identity's row lock serialises it with other rotations and revocations;
  // see migration 2 for why this is a function, migration 3 for which secrets it ends
  // (the current one at the overlap end, older ones now). A unique violation on the new
  // digest rolls the expiry change back too (one statement, one transaction).
  const addSecretSql = `SELECT ${t.rotateFunction}($1, $2, $3, $4::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz) AS added`;
  // With a pepper id (schema version 7's 8th argument); without one, the call above also
  // runs on a schema from before version 7.
  const addSecretWithPepperSql = `SELECT ${t.rotateFunction}($1, $2, $3, $4::timestamptz, $5::timestamptz, $6::timestamptz, $7::timestamptz, $8::text) AS added`;

  // The key's owner comes in the same read (LEFT JOIN: NULL columns for no owner row). Only
  // the owner row the key was issued for owns it: a later owner created with the same id
  // has another incarnation. A key without one (written before migration 13, or by an
  // older release during an upgrade) belongs to an owner row created no later than it.
  const ownerJoin = `LEFT JOIN ${t.owners} o ON o.id = i.owner_id
      AND (o.incarnation = i.owner_incarnation OR (i.owner_incarnation IS NULL AND o.created_at <= i.created_at))`;
  // The roles the key holds, its own and its owner's (by the owner row's incarnation), as
  // JSON in the same read; NULL when none.
  const rolesColumn = `(SELECT json_agg(json_build_object('name', r.name, 'permissions', r.permissions))::text
      FROM ${t.roleGrants} g JOIN ${t.roles} r ON r.name = g.role_name
      WHERE (g.holder_type = 'key' AND g.holder_id = i.id) OR (g.holder_type = 'owner' AND g.holder_id = o.incarnation)) AS roles`;
  const findByDigestSql = `
    SELECT ${identityColumns()}, ${secretColumns()}, ${ownerColumns()}, ${rolesColumn}
    FROM ${t.secrets} s JOIN ${t.identities} i ON i.id = s.identity_id ${ownerJoin}
    WHERE s.digest = $1`;

  // Every pepper's digest of one key, one statement: the primary key's index answers each.
  const findByDigestsSql = `
    SELECT ${identityColumns()}, ${secretColumns()}, ${ownerColumns()}, ${rolesColumn}
    FROM ${t.secrets} s JOIN ${t.identities} i ON i.id = s.identity_id ${ownerJoin}
    WHERE s.digest = ANY($1::text[])
    LIMIT 1`;

  // Lazy re-hash, one statement per batch. A concurrent re-hash of the same secret by
  // another instance waits on the row lock, then finds the digest changed and skips it.
  // The rows are locked in digest order first, as the last-used flush locks them, so a
  // re-hash batch and a flush naming the same keys cannot deadlock.
  const rehashSql = `
    WITH v AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS v(from_digest, to_digest, pepper_id)
    ), locked AS (
      SELECT s.digest FROM ${t.secrets} s WHERE s.digest IN (SELECT from_digest FROM v)
      ORDER BY s.digest
      FOR UPDATE
    )
    UPDATE ${t.secrets} s SET digest = v.to_digest, pepper_id = v.pepper_id
    FROM v
    WHERE s.digest IN (SELECT digest FROM locked) AND s.digest = v.from_digest
      AND NOT EXISTS (SELECT 1 FROM ${t.secrets} taken WHERE taken.digest = v.to_digest)`;

  // Live secrets (neither the secret nor its identity ended) per pepper.
  const countByPepperSql = `
    SELECT s.pepper_id, count(*) AS count
    FROM ${t.secrets} s JOIN ${t.identities} i ON i.id = s.identity_id
    WHERE i.revoked_at IS NULL AND (i.expires_at IS NULL OR i.expires_at > $1::timestamptz)
      AND (s.expires_at IS NULL OR s.expires_at > $1::timestamptz)
    GROUP BY s.pepper_id`;

  const getIdentitySql = `SELECT ${identityColumns()}, ${secretsColumn(t.secrets)} FROM ${t.identities} i WHERE i.id = $1`;

  const revokeSql = `SELECT ${t.revokeFunction}($1, $2::timestamptz) AS revoked`;
  const deleteOwnerSql = `SELECT ${t.deleteOwnerFunction}($1, $2::timestamptz) AS deleted`;

  // The first report is kept whole: every SET expression reads the row as it was, so a
  // row already reported keeps both columns, and two reports at once keep one of them.
  const recordLeakSql = `
    UPDATE ${t.identities} SET
      leak_url = CASE WHEN leaked_at IS NULL THEN $3::text ELSE leak_url END,
      leaked_at = coalesce(leaked_at, $2::timestamptz)
    WHERE id = $1
    RETURNING id`;

  // One statement per batch. Duplicate digests collapse to their latest time (an UPDATE
  // … FROM applies one arbitrary match per row otherwise); rows already as recent are
  // skipped, so no write, no dead tuple. GREATEST keeps it monotonic regardless. The rows
  // are locked in digest order first: every instance flushes on its own timer, and two
  // batches naming the same keys, each locking in the order its plan met them, deadlock
  // (PostgreSQL then aborts one of them). The lock is the one the UPDATE takes anyway (no
  // key column changes); taking it first costs about 85 bytes of WAL per row (`bench capacity`).
  const touchSql = `
    WITH v AS (
      SELECT digest, max(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS u(digest, at) GROUP BY digest
    ), locked AS (
      SELECT s.digest, v.at FROM ${t.secrets} s JOIN v ON v.digest = s.digest
      WHERE s.last_used_at IS NULL OR s.last_used_at < v.at
      ORDER BY s.digest
      FOR NO KEY UPDATE OF s
    )
    UPDATE ${t.secrets} s SET last_used_at = GREATEST(coalesce(s.last_used_at, '-infinity'), locked.at)
    FROM locked
    WHERE s.digest = locked.digest`;

  function secretParams(secret: StoredSecret): unknown[] {
    return [
      secret.digest,
      secret.last4,
      timestampParam(secret.createdAt),
      timestampParam(secret.lastUsedAt),
      timestampParam(secret.expiresAt),
    ];
  }

  /** A found key with its owner when it names one (`null`: no such owner row, which the keyring refuses). */
  function foundFrom(row: Record<string, unknown>): FoundKey {
    const identity = identityFrom(row);
    const secret = secretFromColumns(row);
    const rolesText = row['roles'];
    const found: FoundKey = typeof rolesText === 'string' ? { identity, secret, roles: rolesFrom(rolesText) } : { identity, secret };
    return identity.ownerId === null || identity.ownerId === undefined ? found : { ...found, owner: ownerFrom(row) };
  }

  const roleSelect = `SELECT name, to_json(permissions)::text AS permissions, description, ${epochMs('created_at')} AS created_at, ${epochMs('updated_at')} AS updated_at`;

  function roleRow(row: Record<string, unknown>): StoredRole {
    return {
      name: String(row['name']),
      permissions: (JSON.parse(String(row['permissions'])) as unknown[]).map(String),
      description: String(row['description']),
      createdAt: new Date(Math.round(Number(row['created_at']))),
      updatedAt: new Date(Math.round(Number(row['updated_at']))),
    };
  }

  /**
   * The holder a grant names: the key's id, or the owner's incarnation (see migration 15),
   * locked FOR KEY SHARE so a concurrent delete of the owner waits for the grant.
   */
  function holderSql(target: RoleTarget): string {
    return target.type === 'key' ? `SELECT id AS hid FROM ${t.identities} WHERE id = $1` : `SELECT incarnation AS hid FROM ${t.owners} WHERE id = $1 FOR KEY SHARE`;
  }

  const ownerSelect = `SELECT id, incarnation, metadata::text AS metadata, rate_limits, quota, ${epochMs('created_at')} AS created_at, ${epochMs('disabled_at')} AS disabled_at`;

  function ownerRow(row: Record<string, unknown>): StoredOwner {
    return ownerFrom(row, '') as StoredOwner;
  }

  function keyFrom(row: Record<string, unknown>): StoredKey {
    return { identity: identityFrom(row), secrets: secretsFrom(row['secrets']) };
  }

  const store: KeyStore = {
    async insertIdentity(identity: StoredIdentity, secret: StoredSecret, audit?: AuditEntry): Promise<boolean> {
      const [digest, ...rest] = secretParams(secret);
      const params: unknown[] = [
        identity.id,
        identity.name,
        [...identity.scopes],
        identity.rateLimit?.limit ?? null,
        identity.rateLimit?.windowSeconds ?? null,
        timestampParam(identity.createdAt),
        timestampParam(identity.expiresAt),
        timestampParam(identity.revokedAt),
        digest,
        ...rest,
        identity.prefix,
        JSON.stringify(identity.metadata ?? {}),
        identity.ipAllowlist === null || identity.ipAllowlist === undefined ? null : [...identity.ipAllowlist],
        ...limitsParams(identity),
        secret.pepperId ?? null,
        identity.ownerId ?? null,
        timestampParam(identity.leakedAt ?? null),
        identity.leakedAt === null || identity.leakedAt === undefined ? null : (identity.leakUrl ?? null),
        identity.ownerIncarnation ?? null,
      ];
      const rows = await runQuery(client, audit === undefined ? insertIdentitySql : insertIdentityWithAuditSql(audit, params), params);
      return Number(rows[0]?.inserted ?? 0) > 0;
    },

    async updateIdentity(id: string, changes: Partial<Pick<StoredIdentity, 'metadata' | 'ipAllowlist'>>, audit?: AuditEntry): Promise<StoredKey | undefined> {
      const { metadata, ipAllowlist } = changes;
      const params: unknown[] = [
        id,
        metadata !== undefined,
        metadata === undefined ? null : JSON.stringify(metadata),
        ipAllowlist !== undefined,
        ipAllowlist === undefined || ipAllowlist === null ? null : [...ipAllowlist],
      ];
      const param = (value: unknown): string => `$${params.push(value)}`;
      const logged = audit === undefined ? '' : `, ${auditInsertCte(t, audit, param, 'EXISTS (SELECT 1 FROM i)')}`;
      const sql = `${updateIdentityCte}${logged} ${updatedIdentitySelect}`;
      const [row] = await runQuery(client, sql, params);
      return row === undefined ? undefined : keyFrom(row);
    },

    async updateLimits(id: string, patch: IdentityLimitsPatch, audit?: AuditEntry): Promise<boolean> {
      const sets: string[] = [];
      const params: unknown[] = [id];
      const param = (value: unknown): string => `$${params.push(value)}`;
      if (patch.rateLimits !== undefined) {
        const first = patch.rateLimits?.[0];
        const [list] = limitsParams({ rateLimit: null, rateLimits: patch.rateLimits, quota: null });
        sets.push(
          `rate_limits = ${param(list)}::jsonb`,
          `rate_limit = ${param(first?.limit ?? null)}::integer`,
          `rate_window_seconds = ${param(first?.windowSeconds ?? null)}::float8`,
        );
      }
      if (patch.quota !== undefined) {
        const [, quota] = limitsParams({ rateLimit: null, rateLimits: null, quota: patch.quota });
        sets.push(`quota = ${param(quota)}::jsonb`);
      }
      const statement =
        sets.length === 0 ? `SELECT id FROM ${t.identities} WHERE id = $1` : `UPDATE ${t.identities} SET ${sets.join(', ')} WHERE id = $1 RETURNING id`;
      const query = withAudit(t, statement, params, audit);
      const rows = await runQuery(client, query.sql, query.params);
      return rows.length > 0;
    },

    async addSecret(identityId: string, secret: StoredSecret, expireOthersAt: Date, audit?: AuditEntry): Promise<boolean> {
      const { pepperId } = secret;
      const params = [identityId, ...secretParams(secret), timestampParam(expireOthersAt)];
      const query =
        typeof pepperId === 'string' ? withAudit(t, addSecretWithPepperSql, [...params, pepperId], audit, 'added') : withAudit(t, addSecretSql, params, audit, 'added');
      const rows = await runQuery(client, query.sql, query.params);
      return isTrue(rows[0]?.added);
    },

    async findByDigest(digest: string): Promise<FoundKey | undefined> {
      const [row] = await runQuery(client, findByDigestSql, [digest]);
      return row === undefined ? undefined : foundFrom(row);
    },

    async findByDigests(digests: readonly string[]): Promise<FoundKey | undefined> {
      const [row] = await runQuery(client, findByDigestsSql, [[...digests]]);
      return row === undefined ? undefined : foundFrom(row);
    },

    async rehashDigests(changes: readonly PepperRehash[]): Promise<void> {
      if (changes.length === 0) return;
      await runQuery(client, rehashSql, [changes.map((c) => c.from), changes.map((c) => c.to), changes.map((c) => c.pepperId)]);
    },

    async countByPepper(now: Date): Promise<PepperCount[]> {
      const rows = await runQuery(client, countByPepperSql, [timestampParam(now)]);
      return rows.map((row) => ({ pepperId: typeof row['pepper_id'] === 'string' ? row['pepper_id'] : null, count: Number(row['count']) }));
    },

    async getIdentity(id: string): Promise<StoredKey | undefined> {
      const [row] = await runQuery(client, getIdentitySql, [id]);
      return row === undefined ? undefined : keyFrom(row);
    },

    async listIdentities(query: ListIdentitiesQuery): Promise<{ keys: StoredKey[]; total?: number }> {
      const { take, offset, after, withTotal = false } = query;
      const { cmp, order, params, param } = pageQuery(query);
      // Row-value comparison matches the (created_at DESC, id DESC) index exactly.
      const conditions: string[] = [];
      if (query.ownerId !== undefined) conditions.push(`i.owner_id = ${param(query.ownerId)}::text`);
      if (after !== undefined) conditions.push(`(i.created_at, i.id) ${cmp} (${param(timestampParam(after.createdAt))}::timestamptz, ${param(after.id)}::text)`);
      const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
      const page = `
        SELECT ${identityColumns()}, ${secretsColumn(t.secrets)} FROM ${t.identities} i ${where}
        ORDER BY i.created_at ${order}, i.id ${order}
        LIMIT ${param(take)}::int8${offset === undefined ? '' : ` OFFSET ${param(offset)}::int8`}`;
      if (!withTotal) {
        const rows = await runQuery(client, page, params);
        return { keys: rows.map(keyFrom) };
      }
      // Page and count in one statement (one snapshot, one round trip); the LEFT JOIN keeps
      // the count when the page is empty (an offset past the end).
      const rows = await runQuery(
        client,
        `WITH page AS (${page})
         SELECT page.*, total.n AS total FROM (SELECT count(*) AS n FROM ${t.identities}${query.ownerId === undefined ? '' : ` WHERE owner_id = $${params.push(query.ownerId)}::text`}) total LEFT JOIN page ON true
         ORDER BY page.created_at ${order}, page.id ${order}`,
        params,
      );
      return {
        keys: rows.filter((row) => row.id !== null && row.id !== undefined).map(keyFrom),
        total: Number(rows[0]?.total ?? 0),
      };
    },

    async insertOwner(owner: StoredOwner, audit?: AuditEntry): Promise<boolean> {
      const query = withAudit(
        t,
        `INSERT INTO ${t.owners} (id, metadata, rate_limits, quota, created_at, disabled_at, incarnation)
         VALUES ($1, $2::json, $3::jsonb, $4::jsonb, $5::timestamptz, $6::timestamptz, coalesce($7::text, gen_random_uuid()::text))
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          owner.id,
          JSON.stringify(owner.metadata ?? {}),
          owner.rateLimits === null ? null : JSON.stringify(owner.rateLimits),
          quotaParam(owner.quota ?? null),
          timestampParam(owner.createdAt),
          timestampParam(owner.disabledAt),
          owner.incarnation ?? null,
        ],
        audit,
      );
      const rows = await runQuery(client, query.sql, query.params);
      return rows.length > 0;
    },

    async getOwner(id: string): Promise<StoredOwner | undefined> {
      const [row] = await runQuery(client, `${ownerSelect} FROM ${t.owners} WHERE id = $1`, [id]);
      return row === undefined ? undefined : ownerRow(row);
    },

    async listOwners(query: ListOwnersQuery): Promise<{ owners: StoredOwner[]; total?: number }> {
      const { take, offset, after, withTotal = false } = query;
      const { cmp, order, params, param } = pageQuery(query);
      const where = after === undefined ? '' : `WHERE (created_at, id) ${cmp} (${param(timestampParam(after.createdAt))}::timestamptz, ${param(after.id)}::text)`;
      const rows = await runQuery(
        client,
        `${ownerSelect}${withTotal ? `, (SELECT count(*) FROM ${t.owners}) AS total` : ''} FROM ${t.owners} ${where}
         ORDER BY created_at ${order}, id ${order} LIMIT ${param(take)}::int8${offset === undefined ? '' : ` OFFSET ${param(offset)}::int8`}`,
        params,
      );
      const owners = rows.map(ownerRow);
      if (!withTotal) return { owners };
      // An offset past the end returns no row to carry the count: ask for it alone.
      const total = rows[0] !== undefined ? Number(rows[0].total) : Number((await runQuery(client, `SELECT count(*) AS n FROM ${t.owners}`, []))[0]?.n ?? 0);
      return { owners, total };
    },

    async updateOwner(id: string, patch: OwnerPatch, audit?: AuditEntry): Promise<StoredOwner | undefined> {
      const sets: string[] = [];
      const params: unknown[] = [id];
      const param = (value: unknown): string => `$${params.push(value)}`;
      if (patch.metadata !== undefined) sets.push(`metadata = ${param(JSON.stringify(patch.metadata ?? {}))}::json`);
      if (patch.rateLimits !== undefined) sets.push(`rate_limits = ${param(patch.rateLimits === null ? null : JSON.stringify(patch.rateLimits))}::jsonb`);
      // Both merges read the row the UPDATE locks, so concurrent updates apply one after the
      // other: the stored refill is kept when the patch names none, setAt moves past the
      // stored one (a quota store restarts its count only for a later one), and an owner
      // disabled already keeps its first instant.
      if (patch.quota === null) sets.push('quota = NULL');
      else if (patch.quota !== undefined) {
        const q = `${param(quotaPatchParam(patch.quota))}::jsonb`;
        // `mode` as `refill`: the patch's, else the stored one's; only `observe` is kept.
        sets.push(
          `quota = jsonb_build_object('remaining', ${q}->'remaining',
             'refill', CASE WHEN ${q} ? 'refill' THEN ${q}->'refill' ELSE COALESCE(quota->'refill', 'null'::jsonb) END,
             'setAt', GREATEST((${q}->>'setAt')::int8, COALESCE((quota->>'setAt')::int8 + 1, 0)))
             || CASE WHEN COALESCE(${q}->>'mode', quota->>'mode') = 'observe' THEN '{"mode":"observe"}'::jsonb ELSE '{}'::jsonb END`,
        );
      } else if (patch.quotaMode !== undefined) {
        // Only the mode: `setAt` stays, so the quota store's count goes on.
        sets.push(`quota = CASE WHEN quota IS NULL THEN NULL WHEN ${param(patch.quotaMode)}::text = 'observe' THEN quota || '{"mode":"observe"}'::jsonb ELSE quota - 'mode' END`);
      }
      if (patch.disabledAt === null) sets.push('disabled_at = NULL');
      else if (patch.disabledAt !== undefined) sets.push(`disabled_at = COALESCE(disabled_at, ${param(timestampParam(patch.disabledAt))}::timestamptz)`);
      const changed = sets.length === 0 ? `SELECT * FROM ${t.owners} WHERE id = $1` : `UPDATE ${t.owners} SET ${sets.join(', ')} WHERE id = $1 RETURNING *`;
      const logged = audit === undefined ? '' : `, ${auditInsertCte(t, audit, param, 'EXISTS (SELECT 1 FROM u)')}`;
      const sql = `WITH u AS (${changed})${logged} ${ownerSelect} FROM u`;
      const [row] = await runQuery(client, sql, params);
      return row === undefined ? undefined : ownerRow(row);
    },

    async deleteOwner(id: string, at: Date, audit?: AuditEntry): Promise<boolean> {
      // One statement: the owner row goes and each of its keys is revoked as revoke() does,
      // or nothing happens; see migration 13 for why this is a function.
      const query = withAudit(t, deleteOwnerSql, [id, timestampParam(at)], audit, 'deleted');
      const rows = await runQuery(client, query.sql, query.params);
      return isTrue(rows[0]?.deleted);
    },

    async recordLeak(id: string, at: Date, url: string | null, audit?: AuditEntry): Promise<boolean> {
      const query = withAudit(t, recordLeakSql, [id, timestampParam(at), url], audit);
      const rows = await runQuery(client, query.sql, query.params);
      return rows.length > 0;
    },

    async revoke(id: string, at: Date, audit?: AuditEntry): Promise<boolean> {
      const query = withAudit(t, revokeSql, [id, timestampParam(at)], audit, 'revoked');
      const rows = await runQuery(client, query.sql, query.params);
      return isTrue(rows[0]?.revoked);
    },

    async insertRole(role: StoredRole, audit?: AuditEntry): Promise<boolean> {
      const query = withAudit(
        t,
        `INSERT INTO ${t.roles} (name, permissions, description, created_at, updated_at) VALUES ($1, $2::text[], $3, $4::timestamptz, $5::timestamptz)
         ON CONFLICT (name) DO NOTHING RETURNING name`,
        [role.name, [...role.permissions], role.description, timestampParam(role.createdAt), timestampParam(role.updatedAt)],
        audit,
      );
      return (await runQuery(client, query.sql, query.params)).length > 0;
    },

    async getRole(name: string): Promise<StoredRole | undefined> {
      const [row] = await runQuery(client, `${roleSelect} FROM ${t.roles} WHERE name = $1`, [name]);
      return row === undefined ? undefined : roleRow(row);
    },

    async listRoles(): Promise<StoredRole[]> {
      return (await runQuery(client, `${roleSelect} FROM ${t.roles} ORDER BY name COLLATE "C"`, [])).map(roleRow);
    },

    async updateRole(name: string, patch: RolePatch, audit?: AuditEntry): Promise<StoredRole | undefined> {
      const query = withAudit(
        t,
        `UPDATE ${t.roles} SET
           permissions = CASE WHEN $2::boolean THEN $3::text[] ELSE permissions END,
           description = CASE WHEN $4::boolean THEN $5::text ELSE description END,
           updated_at = $6::timestamptz
         WHERE name = $1
         RETURNING name, to_json(permissions)::text AS permissions, description, ${epochMs('created_at')} AS created_at, ${epochMs('updated_at')} AS updated_at`,
        [name, patch.permissions !== undefined, patch.permissions === undefined ? null : [...patch.permissions], patch.description !== undefined, patch.description ?? null, timestampParam(patch.updatedAt)],
        audit,
      );
      const [row] = await runQuery(client, query.sql, query.params);
      return row === undefined ? undefined : roleRow(row);
    },

    async deleteRole(name: string, audit?: AuditEntry): Promise<boolean> {
      const query = withAudit(t, `DELETE FROM ${t.roles} WHERE name = $1 RETURNING name`, [name], audit);
      return (await runQuery(client, query.sql, query.params)).length > 0;
    },

    async setRoles(target: RoleTarget, names: readonly string[], audit?: AuditEntry): Promise<'set' | 'not_found' | 'unknown_role'> {
      // ONE statement: the roles are locked FOR KEY SHARE (a concurrent deleteRole waits, or
      // has deleted them and they are not found), then the holder's other grants go and the
      // missing ones come, only when the holder exists and every name is a role.
      const params: unknown[] = [target.id, [...new Set(names)], target.type];
      const param = (value: unknown): string => `$${params.push(value)}`;
      const sql = `
        WITH holder AS (${holderSql(target)}),
        known AS (SELECT name FROM ${t.roles} WHERE name = ANY($2::text[]) FOR KEY SHARE),
        ok AS (SELECT hid FROM holder WHERE (SELECT count(*) FROM known) = cardinality($2::text[])),
        dropped AS (DELETE FROM ${t.roleGrants} g USING ok WHERE g.holder_type = $3::text AND g.holder_id = ok.hid AND g.role_name <> ALL($2::text[])),
        added AS (INSERT INTO ${t.roleGrants} (holder_type, holder_id, role_name) SELECT $3::text, ok.hid, r FROM ok, unnest($2::text[]) r ON CONFLICT DO NOTHING)
        ${audit === undefined ? '' : `, ${auditInsertCte(t, audit, param, 'EXISTS (SELECT 1 FROM ok)')}`}
        SELECT EXISTS (SELECT 1 FROM holder) AS found, EXISTS (SELECT 1 FROM ok) AS ok`;
      const [row] = await runQuery(client, sql, params);
      if (!isTrue(row?.['found'])) return 'not_found';
      return isTrue(row?.['ok']) ? 'set' : 'unknown_role';
    },

    async rolesOf(target: RoleTarget): Promise<string[] | undefined> {
      const [row] = await runQuery(
        client,
        `WITH holder AS (${target.type === 'key' ? `SELECT id AS hid FROM ${t.identities} WHERE id = $1` : `SELECT incarnation AS hid FROM ${t.owners} WHERE id = $1`})
         SELECT EXISTS (SELECT 1 FROM holder) AS found,
           (SELECT to_json(coalesce(array_agg(g.role_name ORDER BY g.role_name COLLATE "C"), '{}'))::text FROM ${t.roleGrants} g JOIN holder ON g.holder_id = holder.hid WHERE g.holder_type = $2) AS roles`,
        [target.id, target.type],
      );
      if (!isTrue(row?.['found'])) return undefined;
      return (JSON.parse(String(row?.['roles'])) as unknown[]).map(String);
    },

    async touchLastUsed(updates: readonly { digest: string; at: Date }[]): Promise<void> {
      if (updates.length === 0) return;
      const digests: string[] = [];
      const times: (string | null)[] = [];
      for (const { digest, at } of updates) {
        digests.push(digest);
        times.push(timestampParam(at));
      }
      await runQuery(client, touchSql, [digests, times]);
    },
  };
  return Object.freeze(store);
}
