/**
 * @keyset/postgres: the keyring's `KeyStore` on PostgreSQL, over any structural
 * `{ query(text, params) }` client (node-postgres, PGlite), and its schema as SQL.
 * @module
 */
export { createPostgresKeyStore } from './postgres-key-store.ts';
export type { PostgresKeyStoreOptions } from './postgres-key-store.ts';
export { createPostgresQuotaStore } from './postgres-quota-store.ts';
export type { PostgresQuotaStore, PostgresQuotaStoreOptions } from './postgres-quota-store.ts';
export { SCHEMA_VERSION, migrate, migrationSql } from './migrate.ts';
export type { TableOptions } from './migrate.ts';
export type { MultiStatementQueryable, Queryable, QueryResultLike } from './queryable.ts';
