/**
 * The audit table's SQL pieces: the insert the key store adds to a changing statement (so
 * change and entry commit together, one statement being one transaction), and the row →
 * entry conversion of the audit store.
 * @module
 */
import type { AuditEntry } from '@keyset/core';
import type { TableNames } from './identifiers.ts';
import { epochMs, timestampParam } from './rows.ts';

/** SQL: the audit columns, as read by `auditFrom`. */
export function auditColumns(): string {
  return `id, ${epochMs('at')} AS at, actor, action, target_type, target_id, changes::text AS changes, request_id`;
}

/**
 * A `WITH` member named `audit_row` that inserts `entry` when `condition` holds (a change
 * happened), its parameters pushed through `param`. A data-modifying `WITH` member runs
 * whether or not the main query reads it, in the same statement as the change.
 */
export function auditInsertCte(t: TableNames, entry: AuditEntry, param: (value: unknown) => string, condition: string): string {
  return `audit_row AS (
      INSERT INTO ${t.audit} (id, at, actor, action, target_type, target_id, changes, request_id)
      SELECT ${param(entry.id)}::text, ${param(timestampParam(entry.at))}::timestamptz, ${param(entry.actor)}::text, ${param(entry.action)}::text,
        ${param(entry.target.type)}::text, ${param(entry.target.id)}::text, ${param(JSON.stringify(entry.changes))}::json, ${param(entry.requestId)}::text
      WHERE ${condition}
    )`;
}

/**
 * `statement` (one that may stand in a `WITH` member: a SELECT, or an INSERT/UPDATE/DELETE
 * with RETURNING) with `entry` inserted in the same statement when a returned row satisfies
 * `okColumn` (a boolean column of it), or when any row is returned (`okColumn` undefined).
 * Without an entry, `statement` as it is.
 */
export function withAudit(
  t: TableNames,
  statement: string,
  params: unknown[],
  entry: AuditEntry | undefined,
  okColumn?: string,
): { sql: string; params: unknown[] } {
  if (entry === undefined) return { sql: statement, params };
  const all = [...params];
  const param = (value: unknown): string => `$${all.push(value)}`;
  const condition = `EXISTS (SELECT 1 FROM change${okColumn === undefined ? '' : ` WHERE change.${okColumn}`})`;
  return { sql: `WITH change AS (${statement}), ${auditInsertCte(t, entry, param, condition)} SELECT * FROM change`, params: all };
}

function toDate(value: unknown): Date {
  if (value instanceof Date) return new Date(value.getTime());
  return new Date(Math.round(Number(value)));
}

function targetType(value: unknown): AuditEntry['target']['type'] {
  return value === 'owner' || value === 'role' ? value : 'key';
}

/** An entry from a row of `auditColumns()`. */
export function auditFrom(row: Record<string, unknown>): AuditEntry {
  const changes = typeof row['changes'] === 'string' ? JSON.parse(row['changes']) : row['changes'];
  return Object.freeze({
    id: String(row['id']),
    at: toDate(row['at']),
    actor: String(row['actor']),
    action: String(row['action']) as AuditEntry['action'],
    target: Object.freeze({ type: targetType(row['target_type']), id: String(row['target_id']) }),
    changes: Object.freeze(changes as AuditEntry['changes']),
    requestId: typeof row['request_id'] === 'string' ? row['request_id'] : null,
  });
}
