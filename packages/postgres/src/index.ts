/**
 * @keyset/postgres: the keyring's `KeyStore` on PostgreSQL, over any structural
 * `{ query(text, params) }` client (node-postgres, PGlite), its schema as SQL, quotas, usage counts, and a
 * revocation bus on LISTEN/NOTIFY for deployments without Redis.
 * @module
 */
export { createPostgresKeyStore } from './postgres-key-store.ts';
export type { PostgresKeyStoreOptions } from './postgres-key-store.ts';
export { createPostgresAuditStore } from './postgres-audit-store.ts';
export type { PostgresAuditStoreOptions } from './postgres-audit-store.ts';
export { createPostgresQuotaStore } from './postgres-quota-store.ts';
export type { PostgresQuotaStore, PostgresQuotaStoreOptions } from './postgres-quota-store.ts';
export { createPostgresUsageStore } from './postgres-usage-store.ts';
export type { PostgresUsageStoreOptions } from './postgres-usage-store.ts';
export { createPostgresRevocationBus } from './revocation-bus.ts';
export type {
  NotificationListener,
  PostgresNotification,
  PostgresRevocableKeyring,
  PostgresRevocationBus,
  PostgresRevocationBusOptions,
} from './revocation-bus.ts';
export { SCHEMA_VERSION, migrate, migrationSql } from './migrate.ts';
// The `timestamptz` type parser the pagination guide asks for, where a pg user looks first.
export { isoTimestamp } from '@keyset/core';
export type { TableOptions } from './migrate.ts';
export type { MultiStatementQueryable, Queryable, QueryResultLike } from './queryable.ts';
