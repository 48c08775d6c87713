/**
 * Table names from the `schema` and `tablePrefix` options. Both are validated when a
 * factory runs (so a typo fails at start-up, not on the first request) and always quoted,
 * so they can be interpolated into SQL text safely.
 * @module
 */
import { ConfigError } from '@keyset/core';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** PostgreSQL truncates identifiers past 63 bytes (NAMEDATALEN - 1), silently: refuse instead. */
const MAX_IDENTIFIER_LENGTH = 63;
/** The longest name derived from the prefix (see `tableNames`). */
const LONGEST_SUFFIX = 'identities_created_at_id_idx';

/** Quoted, schema-qualified names of every object the store and its migrations use. */
export interface TableNames {
  schema: string;
  /** Unquoted schema name, for catalog lookups. */
  schemaName: string;
  /** Unquoted `schema.prefix`, keys the migration advisory lock. */
  lockName: string;
  identities: string;
  secrets: string;
  migrations: string;
  identitiesListIndex: string;
  secretsIdentityIndex: string;
  rotateFunction: string;
  revokeFunction: string;
  /** Quota counts of `createPostgresQuotaStore`. */
  quotas: string;
  spendQuotaFunction: string;
  /** Several quotas (a key's and its owner's) spent together (migration 10). */
  spendQuotasFunction: string;
  /** Owners (migration 7), their list index, and the index of an owner's keys. */
  owners: string;
  ownersListIndex: string;
  identitiesOwnerIndex: string;
  /** Deletes an owner and revokes its keys, serialised with key inserts (migration 13). */
  deleteOwnerFunction: string;
  /** The audit log (migration 11), its list and target indexes, and its append-only guard. */
  audit: string;
  auditListIndex: string;
  auditTargetIndex: string;
  auditAppendOnlyFunction: string;
  auditAppendOnlyTrigger: string;
  /** Usage buckets of `createPostgresUsageStore` (migration 12) and the index of an owner's rows. */
  usage: string;
  usageOwnerIndex: string;
  usageBucketIndex: string;
  /** The last flush sequence of each usage counter instance, and the index of hour and day rows (migration 14). */
  usageFlushes: string;
  usageCoarseIndex: string;
  roles: string;
  roleGrants: string;
  roleGrantsRoleIndex: string;
  auditTargetTypeCheck: string;
}

function quote(identifier: string): string {
  return `"${identifier}"`;
}

/** Validates the options and derives the quoted names. Throws `ConfigError`. */
export function tableNames(schema: string, tablePrefix: string): TableNames {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema) || schema.length > MAX_IDENTIFIER_LENGTH) {
    throw new ConfigError(
      `schema must match ${IDENTIFIER.source} and be at most ${MAX_IDENTIFIER_LENGTH} characters, got ${JSON.stringify(schema)}`,
    );
  }
  if (
    typeof tablePrefix !== 'string' ||
    !IDENTIFIER.test(tablePrefix) ||
    tablePrefix.length + LONGEST_SUFFIX.length > MAX_IDENTIFIER_LENGTH
  ) {
    throw new ConfigError(
      `tablePrefix must match ${IDENTIFIER.source} and be at most ${MAX_IDENTIFIER_LENGTH - LONGEST_SUFFIX.length} characters, got ${JSON.stringify(tablePrefix)}`,
    );
  }
  const s = quote(schema);
  return {
    schema: s,
    schemaName: schema,
    lockName: `${schema}.${tablePrefix}`,
    identities: `${s}.${quote(`${tablePrefix}identities`)}`,
    secrets: `${s}.${quote(`${tablePrefix}secrets`)}`,
    migrations: `${s}.${quote(`${tablePrefix}migrations`)}`,
    // Index names are unqualified in CREATE INDEX: an index always lives in its table's schema.
    identitiesListIndex: quote(`${tablePrefix}identities_created_at_id_idx`),
    secretsIdentityIndex: quote(`${tablePrefix}secrets_identity_id_idx`),
    rotateFunction: `${s}.${quote(`${tablePrefix}rotate`)}`,
    revokeFunction: `${s}.${quote(`${tablePrefix}revoke`)}`,
    quotas: `${s}.${quote(`${tablePrefix}quotas`)}`,
    spendQuotaFunction: `${s}.${quote(`${tablePrefix}spend_quota`)}`,
    spendQuotasFunction: `${s}.${quote(`${tablePrefix}spend_quotas`)}`,
    owners: `${s}.${quote(`${tablePrefix}owners`)}`,
    ownersListIndex: quote(`${tablePrefix}owners_created_at_id_idx`),
    identitiesOwnerIndex: quote(`${tablePrefix}identities_owner_id_idx`),
    deleteOwnerFunction: `${s}.${quote(`${tablePrefix}delete_owner`)}`,
    audit: `${s}.${quote(`${tablePrefix}audit`)}`,
    auditListIndex: quote(`${tablePrefix}audit_at_id_idx`),
    auditTargetIndex: quote(`${tablePrefix}audit_target_idx`),
    auditAppendOnlyFunction: `${s}.${quote(`${tablePrefix}audit_append_only`)}`,
    auditAppendOnlyTrigger: quote(`${tablePrefix}audit_append_only`),
    usage: `${s}.${quote(`${tablePrefix}usage`)}`,
    usageOwnerIndex: quote(`${tablePrefix}usage_owner_id_idx`),
    usageBucketIndex: quote(`${tablePrefix}usage_bucket_idx`),
    usageFlushes: `${s}.${quote(`${tablePrefix}usage_flushes`)}`,
    usageCoarseIndex: quote(`${tablePrefix}usage_coarse_idx`),
    roles: `${s}.${quote(`${tablePrefix}roles`)}`,
    roleGrants: `${s}.${quote(`${tablePrefix}role_grants`)}`,
    roleGrantsRoleIndex: quote(`${tablePrefix}role_grants_role_name_idx`),
    // The name PostgreSQL gave the audit table's inline CHECK on target_type (version 11).
    auditTargetTypeCheck: quote(`${tablePrefix}audit_target_type_check`),
  };
}
