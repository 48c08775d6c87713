/**
 * One page of the audit log for a paginator's plan: the plan (cursor or offset, either
 * direction) checked and turned into an `AuditQuery`, as `KeyAdmin.list` does for keys.
 * @module
 */
import { KeysetError } from '../errors.ts';
import { isInstantInRange } from '../instant.ts';
import { toListQuery, type KeyListPlan } from '../admin/key-input.ts';
import { AUDIT_ACTIONS, type AuditEntry, type AuditFilters, type AuditStore } from './audit-store.ts';

/** One page of `listAudit`, as `Paginator.page()` takes it (see `KeyListResult`). */
export interface AuditListResult {
  /** Up to `plan.take` entries, newest first (oldest first for a backward plan). */
  records: AuditEntry[];
  hasMore: boolean;
  /** Matching entries (offset mode only). */
  total?: number;
}

function invalid(field: string, detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field } });
}

/** `filters` checked: a known action, valid dates, `from` not after `to`. */
function checkFilters(filters: AuditFilters): AuditFilters {
  const { target, actor, action, from, to } = filters;
  if (target !== undefined && typeof target !== 'string') throw invalid('target', '`target` must be a string.');
  if (actor !== undefined && typeof actor !== 'string') throw invalid('actor', '`actor` must be a string.');
  if (action !== undefined && !AUDIT_ACTIONS.includes(action)) throw invalid('action', `\`action\` must be one of: ${AUDIT_ACTIONS.join(', ')}.`);
  for (const [field, value] of [['from', from], ['to', to]] as const) {
    if (value !== undefined && !(value instanceof Date && isInstantInRange(value.getTime()))) {
      throw invalid(field, `\`${field}\` must be a date from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.`);
    }
  }
  if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) throw invalid('from', '`from` must not be after `to`.');
  return filters;
}

/**
 * One page of `store`'s entries matching `filters`, for `plan` (from `Paginator.plan()`; bind
 * the same filters into the cursor by giving them to the paginator). A position that is not
 * an audit position → 400 `invalid_cursor`.
 *
 * @example
 * ```ts
 * const plan = await auditPaginator.plan(url.searchParams);
 * const { records, total } = await listAudit(store, plan, { action: 'key.revoked' });
 * const page = await auditPaginator.page(plan, records, total === undefined ? { url } : { url, total });
 * ```
 */
export async function listAudit(store: AuditStore, plan: KeyListPlan, filters: AuditFilters = {}): Promise<AuditListResult> {
  let list;
  try {
    list = toListQuery(plan);
  } catch (error) {
    if (error instanceof KeysetError && error.code === 'invalid_cursor') {
      throw new KeysetError('invalid_cursor', { detail: 'The cursor does not point into the audit log.' });
    }
    throw error;
  }
  const { query, limit } = list;
  const { after, ...rest } = query;
  const { entries, total } = await store.list({
    ...rest,
    ...checkFilters(filters),
    ...(after === undefined ? {} : { after: { at: after.createdAt, id: after.id } }),
  });
  const records = entries.slice(0, query.take);
  return total === undefined ? { records, hasMore: entries.length > limit } : { records, hasMore: entries.length > limit, total };
}
