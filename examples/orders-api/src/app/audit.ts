/**
 * `GET /api/audit` (scope `keys:admin`): the audit log, newest first, filtered by `target`,
 * `actor`, `action` and time (`from` inclusive, `to` exclusive). The filters are the
 * paginator's, parsed once and bound into the cursor as the orders filters are. Also who an
 * admin request acts as (`adminContext`): its key's id and its request id.
 * @module
 */
import type { AuditAction, AuditContext, AuditEntry, AuditFilters, AuditStore, PagePlan } from '@keyset/core';
import { AUDIT_ACTIONS, listAudit, requestIdFrom } from '@keyset/core/adapter';
import { instantParam, invalid, singleParam } from './validation.ts';

/** Longest `target` or `actor` accepted: no id or actor the log stores is longer. */
const MAX_FILTER_LENGTH = 128;

/**
 * The filters of one request, canonical (times as ISO 8601 in UTC), so two spellings of one
 * instant share cursors.
 */
// A type alias, not an interface: it must be assignable to the paginator's `Record<string, unknown>`.
export type AuditQueryFilters = {
  target?: string;
  actor?: string;
  action?: AuditAction;
  from?: string;
  to?: string;
};

function text(query: URLSearchParams, name: 'target' | 'actor'): string | undefined {
  const value = singleParam(query, name);
  if (value === undefined) return undefined;
  if (value.length > MAX_FILTER_LENGTH) throw invalid(name, `\`${name}\` must be at most ${MAX_FILTER_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(name, `\`${name}\` must not contain control characters`);
  return value;
}

function instant(query: URLSearchParams, name: 'from' | 'to'): string | undefined {
  return instantParam(query, name)?.toISOString();
}

/**
 * Reads the filters from the raw query; every bad value is a 400 `invalid_request` naming
 * the parameter (repeated, empty, too long, an unknown action, a malformed time, `from`
 * after `to`).
 *
 * @example
 * ```ts
 * auditFilters(new URLSearchParams('action=key.revoked&from=2030-01-01T00:00:00%2B01:00'));
 * // → { action: 'key.revoked', from: '2029-12-31T23:00:00.000Z' }
 * ```
 */
export function auditFilters(query: URLSearchParams): AuditQueryFilters {
  const filters: AuditQueryFilters = {};
  const target = text(query, 'target');
  if (target !== undefined) filters.target = target;
  const actor = text(query, 'actor');
  if (actor !== undefined) filters.actor = actor;
  const action = singleParam(query, 'action');
  if (action !== undefined) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(action)) throw invalid('action', `\`action\` must be one of: ${AUDIT_ACTIONS.join(', ')}`);
    filters.action = action as AuditAction;
  }
  const from = instant(query, 'from');
  if (from !== undefined) filters.from = from;
  const to = instant(query, 'to');
  if (to !== undefined) filters.to = to;
  if (from !== undefined && to !== undefined && from > to) throw invalid('from', '`from` must not be after `to`');
  return filters;
}

/** The store's filters for the parsed ones. */
function storeFilters(filters: AuditQueryFilters | undefined): AuditFilters {
  const out: AuditFilters = {};
  if (filters?.target !== undefined) out.target = filters.target;
  if (filters?.actor !== undefined) out.actor = filters.actor;
  if (filters?.action !== undefined) out.action = filters.action;
  if (filters?.from !== undefined) out.from = new Date(filters.from);
  if (filters?.to !== undefined) out.to = new Date(filters.to);
  return out;
}

/** The audit handler over `audit` (the key store's log). */
export function createAuditHandlers(deps: { audit: AuditStore }) {
  const { audit } = deps;
  return Object.freeze({
    /** One page of entries for `plan`, filtered by `plan.filters` (the audit paginator parsed them). */
    async list(plan: PagePlan): Promise<{ rows: AuditEntry[]; total?: number }> {
      const { records, total } = await listAudit(audit, plan, storeFilters(plan.filters as AuditQueryFilters | undefined));
      return total === undefined ? { rows: records } : { rows: records, total };
    },
  });
}

/**
 * Who an admin request acts as, for the audit log: the admin key's id, and the request's
 * id (core's `requestIdFrom`: the client's `X-Request-Id` when it is in the safe form,
 * else a new `req_<uuid>`), which the adapters echo as `X-Request-Id`.
 */
export function adminContext(keyId: string, requestIdHeader: string | null | undefined): AuditContext & { actor: string; requestId: string } {
  return { actor: keyId, requestId: requestIdFrom(requestIdHeader) };
}
