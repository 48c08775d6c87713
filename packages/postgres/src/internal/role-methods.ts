/**
 * The role methods of the PostgreSQL key store: permissions bundled under a name, held by
 * keys and owners, each method ONE statement (with its audit entry, when given, in the same
 * statement).
 * @module
 */
import type { AuditEntry, KeyStore, RolePatch, RoleTarget, StoredRole } from '@keyset/core';
import { auditInsertCte, withAudit } from './audit-rows.ts';
import type { TableNames } from './identifiers.ts';
import { epochMs, isTrue, timestampParam } from './rows.ts';
import { runQuery } from './run-query.ts';
import type { Queryable } from '../queryable.ts';

/** What `createPostgresKeyStore` answers about roles, over `client` and the tables `t`. */
export function roleMethods(
  client: Queryable,
  t: TableNames,
): Required<Pick<KeyStore, 'insertRole' | 'getRole' | 'listRoles' | 'updateRole' | 'deleteRole' | 'setRoles' | 'rolesOf'>> {
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

  return {
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
  };
}
