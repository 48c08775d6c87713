/**
 * The owner methods of the PostgreSQL key store: the customer several keys belong to, each
 * method ONE statement (with its audit entry, when given, in the same statement).
 * @module
 */
import type { AuditEntry, KeyStore, ListOwnersQuery, OwnerPatch, StoredOwner } from '@keyset/core';
import { auditInsertCte, withAudit } from './audit-rows.ts';
import type { TableNames } from './identifiers.ts';
import { pageQuery } from './page-query.ts';
import { epochMs, isTrue, ownerFrom, quotaParam, quotaPatchParam, timestampParam } from './rows.ts';
import { runQuery } from './run-query.ts';
import type { Queryable } from '../queryable.ts';

/** What `createPostgresKeyStore` answers about owners, over `client` and the tables `t`. */
export function ownerMethods(
  client: Queryable,
  t: TableNames,
): Required<Pick<KeyStore, 'insertOwner' | 'getOwner' | 'listOwners' | 'updateOwner' | 'deleteOwner'>> {
  const deleteOwnerSql = `SELECT ${t.deleteOwnerFunction}($1, $2::timestamptz) AS deleted`;

  const ownerSelect = `SELECT id, incarnation, metadata::text AS metadata, rate_limits, quota, ${epochMs('created_at')} AS created_at, ${epochMs('disabled_at')} AS disabled_at`;

  function ownerRow(row: Record<string, unknown>): StoredOwner {
    return ownerFrom(row, '') as StoredOwner;
  }

  return {
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
  };
}
