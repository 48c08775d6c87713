/**
 * The store's schema as plain SQL, applied by `migrate()` or by your own migration tool
 * (`migrationSql()` returns the same text).
 *
 * The script is idempotent and safe to run from several instances at once:
 * - it runs as ONE multi-statement query, which PostgreSQL executes as one implicit
 *   transaction (simple query protocol), so a failure leaves nothing half-applied and
 *   no pooled connection is left inside an open transaction;
 * - its first statement takes a transaction-scoped advisory lock keyed by schema and
 *   prefix, so concurrent migrators queue up instead of racing on `CREATE TABLE`;
 * - every version runs at most once, recorded in `<prefix>migrations`.
 * @module
 */
import { assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import { tableNames } from './internal/identifiers.ts';
import type { Migration } from './internal/migration.ts';
import { MIGRATIONS_10_TO_16 } from './internal/migrations-10-to-16.ts';
import { MIGRATIONS_1_TO_9 } from './internal/migrations-1-to-9.ts';
import { runQuery } from './internal/run-query.ts';
import type { MultiStatementQueryable } from './queryable.ts';

/** Where the tables live. Shared by `migrate`, `migrationSql` and `createPostgresKeyStore`. */
export interface TableOptions {
  /**
   * Schema of the tables; created when missing. Must match `^[a-z_][a-z0-9_]*$`.
   * @default 'public'
   */
  schema?: string;
  /**
   * Prefix of every table and index name. Must match `^[a-z_][a-z0-9_]*$`.
   * @default 'keyset_'
   */
  tablePrefix?: string;
}

/** Every name `TableOptions` knows, checked by `migrationSql` and `migrate`. */
const TABLE_OPTIONS = { schema: true, tablePrefix: true } as const satisfies KnownOptions<TableOptions>;

/** Every schema version, in the order they apply. */
const MIGRATIONS: readonly Migration[] = [...MIGRATIONS_1_TO_9, ...MIGRATIONS_10_TO_16];

/**
 * The newest schema version `migrate()` applies: the highest listed (versions need not be
 * contiguous; each is applied on its own and recorded in `<prefix>migrations`).
 */
export const SCHEMA_VERSION: number = Math.max(...MIGRATIONS.map((m) => m.version));

/** Internal: every version `migrate()` applies, in order (for the store's tests). */
export const MIGRATION_VERSIONS: readonly number[] = Object.freeze(MIGRATIONS.map((m) => m.version));

/**
 * The migration script for these options: idempotent, one implicit transaction, guarded
 * by an advisory lock. Run it with any tool that sends it as one simple query
 * (`psql -1 -f`, node-postgres `query(text)` without parameters, PGlite `exec`).
 *
 * @example
 * ```ts
 * await writeFile('migrations/001_keyset.sql', migrationSql({ schema: 'auth' }));
 * ```
 */
export function migrationSql(options: TableOptions = {}): string {
  assertKnownOptions('migrationSql', options, TABLE_OPTIONS);
  const { schema = 'public', tablePrefix = 'keyset_' } = options;
  const t = tableNames(schema, tablePrefix);
  const steps = MIGRATIONS.map(
    ({ version, sql }) => `
DO $keyset$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${t.migrations} WHERE version = ${version}) THEN${sql(t)}
    INSERT INTO ${t.migrations} (version) VALUES (${version});
  END IF;
END $keyset$;`,
  );
  // Names are validated by tableNames(): safe inside quotes and string literals.
  return `-- keyset key store, schema ${t.schema}, tables ${JSON.stringify(tablePrefix)}*, version ${SCHEMA_VERSION}
SELECT pg_advisory_xact_lock(hashtext('keyset.migrate'), hashtext('${t.lockName}'));
DO $keyset$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${t.schemaName}') THEN
    CREATE SCHEMA ${t.schema};
  END IF;
END $keyset$;
CREATE TABLE IF NOT EXISTS ${t.migrations} (
  version integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
);${steps.join('')}
`;
}

/**
 * Creates or upgrades the store's tables. Idempotent; concurrent calls (several instances
 * starting together) wait for each other. Rejects with `KeysetError('unavailable')` when
 * the database fails, the driver error as `cause`.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool, { schema: 'auth' });
 * ```
 */
export async function migrate(client: MultiStatementQueryable, options: TableOptions = {}): Promise<void> {
  assertKnownOptions('migrate', options, TABLE_OPTIONS);
  const sql = migrationSql(options);
  // Capability, not name: PGlite's query() takes one statement, its exec() several.
  const exec = typeof client.exec === 'function' ? client.exec.bind(client) : undefined;
  await runQuery(exec === undefined ? client : { query: (text) => exec(text).then(() => ({ rows: [] })) }, sql);
}
