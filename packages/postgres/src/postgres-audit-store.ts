/**
 * `AuditStore` on PostgreSQL: reads (and prunes) the audit table that the key store of
 * the same `schema`/`tablePrefix` writes with every change (migration 11). `append` is for
 * entries of changes made outside the key store; the table refuses updates (a trigger).
 * @module
 */
import { ConfigError } from '@keyset/core';
import type { AuditEntry, AuditQuery, AuditStore } from '@keyset/core';
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import { auditColumns, auditFrom, auditInsertCte } from './internal/audit-rows.ts';
import { tableNames } from './internal/identifiers.ts';
import { timestampParam } from './internal/rows.ts';
import { runQuery } from './internal/run-query.ts';
import type { PostgresKeyStoreOptions } from './postgres-key-store.ts';

/** Options of `createPostgresAuditStore`: the same client and tables as the key store's. */
export type PostgresAuditStoreOptions = PostgresKeyStoreOptions;

const AUDIT_STORE_OPTIONS = { client: true, schema: true, tablePrefix: true } as const satisfies KnownOptions<PostgresAuditStoreOptions>;

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/**
 * The audit log of the key store on the same tables, newest first (`at DESC, id DESC`, the
 * `audit_at_id_idx` index; a `target` filter uses `audit_target_idx`).
 *
 * @example
 * ```ts
 * const audit = createPostgresAuditStore({ client: pool });
 * const { entries } = await audit.list({ take: 20, target: 'cus_42' });
 * await audit.prune(new Date(Date.now() - 90 * 86_400_000)); // keep 90 days
 * ```
 */
export function createPostgresAuditStore(options: PostgresAuditStoreOptions): AuditStore {
  assertKnownOptions('createPostgresAuditStore', options, AUDIT_STORE_OPTIONS);
  const { client, schema = 'public', tablePrefix = 'keyset_' } = options;
  if (typeof client?.query !== 'function') {
    throw new ConfigError('client must have a query(text, params) method, e.g. a node-postgres Pool or a PGlite instance');
  }
  const t = tableNames(schema, tablePrefix);

  return Object.freeze({
    async append(entry: AuditEntry): Promise<void> {
      const params: unknown[] = [];
      const param = (value: unknown): string => `$${params.push(value)}`;
      await runQuery(client, `WITH ${auditInsertCte(t, entry, param, 'true')} SELECT 1`, params);
    },

    async list(query: AuditQuery): Promise<{ entries: AuditEntry[]; total?: number }> {
      const { take, offset, after, direction = 'forward', withTotal = false } = query;
      if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`direction must be 'forward' or 'backward'`);
      checkCount('take', take);
      checkCount('offset', offset);
      const params: unknown[] = [];
      const param = (value: unknown): string => `$${params.push(value)}`;
      const filters: string[] = [];
      if (query.target !== undefined) filters.push(`target_id = ${param(query.target)}::text`);
      if (query.actor !== undefined) filters.push(`actor = ${param(query.actor)}::text`);
      if (query.action !== undefined) filters.push(`action = ${param(query.action)}::text`);
      if (query.from !== undefined) filters.push(`at >= ${param(timestampParam(query.from))}::timestamptz`);
      if (query.to !== undefined) filters.push(`at < ${param(timestampParam(query.to))}::timestamptz`);
      const filterSql = filters.length === 0 ? '' : `WHERE ${filters.join(' AND ')}`;
      const order = direction === 'forward' ? 'DESC' : 'ASC';
      // Row-value comparison matches the (at DESC, id DESC) index exactly.
      const conditions = after === undefined ? filters : [...filters, `(at, id) ${direction === 'forward' ? '<' : '>'} (${param(timestampParam(after.at))}::timestamptz, ${param(after.id)}::text)`];
      const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
      const page = `SELECT ${auditColumns()} FROM ${t.audit} ${where} ORDER BY at ${order}, id ${order}
        LIMIT ${param(take)}::int8${offset === undefined ? '' : ` OFFSET ${param(offset)}::int8`}`;
      if (!withTotal) return { entries: (await runQuery(client, page, params)).map(auditFrom) };
      // Page and count in one statement (one snapshot); the LEFT JOIN keeps the count when the page is empty.
      const rows = await runQuery(
        client,
        `WITH page AS (${page})
         SELECT page.*, total.n AS total FROM (SELECT count(*) AS n FROM ${t.audit} ${filterSql}) total LEFT JOIN page ON true
         ORDER BY page.at ${order}, page.id ${order}`,
        params,
      );
      return { entries: rows.filter((row) => row.id !== null && row.id !== undefined).map(auditFrom), total: Number(rows[0]?.total ?? 0) };
    },

    async prune(before: Date): Promise<number> {
      const rows = await runQuery(client, `WITH gone AS (DELETE FROM ${t.audit} WHERE at < $1::timestamptz RETURNING 1) SELECT count(*) AS n FROM gone`, [
        timestampParam(before),
      ]);
      return Number(rows[0]?.n ?? 0);
    },
  });
}
