/**
 * The PostgreSQL store's migrations, run by `describePostgresKeyStore` for each backend:
 * idempotent and concurrent runs, each version recorded once, schema placement, and a
 * database an older release left behind brought up to date with its rows intact.
 * @module
 */
import type { StoredSecret } from '@keyset/core/adapter';
import { describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { MIGRATION_VERSIONS, SCHEMA_VERSION, migrate, migrationSql } from './migrate.ts';
import type { MultiStatementQueryable, Queryable } from './queryable.ts';
import { makeIdentity, makeSecret, mostLiveAtOnce } from './key-store-fixtures.test-support.ts';
import { freshPrefix, type PostgresBackend } from './postgres-fixtures.test-support.ts';

const T_LEAK = Date.parse('2026-11-26T12:00:00.123Z');

/** Every migration version, as `<prefix>migrations` lists them once fully migrated. */
export const ALL_VERSIONS: { version: number }[] = MIGRATION_VERSIONS.map((version) => ({ version }));

/** The versions recorded in `<prefix>migrations`, in order. */
export async function versions(client: Queryable, schema: string, tablePrefix: string): Promise<{ version: number }[]> {
  const { rows } = await client.query(`SELECT version FROM "${schema}"."${tablePrefix}migrations" ORDER BY version`);
  return rows as { version: number }[];
}

/** `migrationSql` without the versions after `version`: a database as an older release left it. */
export function migrationSqlUpTo(version: number, options: { schema: string; tablePrefix: string }): string {
  const cut = migrationSqlWith((v) => v <= version, options);
  expect(cut.match(MIGRATION_BLOCK)).toHaveLength(MIGRATION_VERSIONS.filter((v) => v <= version).length);
  return cut;
}

const MIGRATION_BLOCK = /\nDO \$keyset\$ BEGIN\n {2}IF NOT EXISTS \(SELECT 1 FROM \S+ WHERE version = (\d+)\) THEN[\s\S]*?\nEND \$keyset\$;/g;

/** The migration script with only the versions `keep` accepts. */
export function migrationSqlWith(keep: (version: number) => boolean, options: { schema: string; tablePrefix: string }): string {
  return migrationSql(options).replace(MIGRATION_BLOCK, (block, v: string) => (keep(Number(v)) ? block : ''));
}

/** Runs a multi-statement script the way `migrate()` does. */
async function runScript(client: MultiStatementQueryable, sql: string): Promise<void> {
  if (typeof client.exec === 'function') await client.exec(sql);
  else await client.query(sql);
}

/** Registers the migration tests; `backend` is called inside them, after the file's `beforeAll` has connected. */
export function describeMigrate(backend: () => PostgresBackend): void {
  describe('migrate', () => {
    it('is idempotent: a second run changes nothing and records each version once', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await migrate(client, { schema, tablePrefix });
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      const identity = makeIdentity();
      const secret = makeSecret();
      await store.insertIdentity(identity, secret);
      await migrate(client, { schema, tablePrefix });
      expect(await store.findByDigest(secret.digest)).toEqual({ identity, secret });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
    });

    it('survives concurrent runs', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await Promise.all(Array.from({ length: 4 }, () => migrate(client, { schema, tablePrefix })));
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
    });

    it('upgrades a database that lacks a later version', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await migrate(client, { schema, tablePrefix });
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      const identity = makeIdentity();
      await store.insertIdentity(identity, makeSecret());
      await client.query(`DELETE FROM "${schema}"."${tablePrefix}migrations" WHERE version = 2`);
      // The 7-argument function (version 7 added an 8-argument overload that calls it).
      await client.query(`DROP FUNCTION "${schema}"."${tablePrefix}rotate"(text, text, text, timestamptz, timestamptz, timestamptz, timestamptz)`);
      await expect(store.addSecret(identity.id, makeSecret(), new Date())).rejects.toThrow(/run `await migrate\(client\)`/);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      expect(await store.addSecret(identity.id, makeSecret(), new Date())).toBe(true);
    });

    it('migration 3 upgrades a version-2 database: rotating twice no longer leaves three live secrets', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      // Every version but 3 (the store writes the columns of later ones).
      await runScript(client, migrationSqlWith((v) => v !== 3, { schema, tablePrefix }));
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS.filter(({ version }) => version !== 3));
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      const rotateTwice = async (): Promise<StoredSecret[]> => {
        const identity = makeIdentity();
        await store.insertIdentity(identity, makeSecret());
        const t0 = identity.createdAt.getTime();
        await store.addSecret(identity.id, makeSecret({ createdAt: new Date(t0 + 1000) }), new Date(t0 + 1000 + 3_600_000));
        await store.addSecret(identity.id, makeSecret({ createdAt: new Date(t0 + 2000) }), new Date(t0 + 2000 + 3_600_000));
        return (await store.getIdentity(identity.id))?.secrets ?? [];
      };
      expect(mostLiveAtOnce(await rotateTwice())).toBe(3); // the version-2 function's defect
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      expect(mostLiveAtOnce(await rotateTwice())).toBe(2);
    });

    it('migration 5 upgrades a version-4 database: existing keys read with no prefix, metadata {} and no allowlist', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await runScript(client, migrationSqlUpTo(4, { schema, tablePrefix }));
      const t = `"${schema}"."${tablePrefix}`;
      await client.query(`INSERT INTO ${t}identities" (id, name, scopes) VALUES ('key_old', 'old', '{a}')`);
      await client.query(`INSERT INTO ${t}secrets" (digest, identity_id, last4) VALUES ('${'ab'.repeat(32)}', 'key_old', 'abcd')`);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      const found = await store.findByDigest('ab'.repeat(32));
      expect(found?.identity).toMatchObject({ id: 'key_old', prefix: null, metadata: {}, ipAllowlist: null });
      expect((await store.updateIdentity?.('key_old', { metadata: { tier: 'gold' } }))?.identity.metadata).toEqual({ tier: 'gold' });
    });

    it('migration 6 upgrades a version-5 database: a single-limit key reads as a one-element rateLimits list, no quota', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await runScript(client, migrationSqlUpTo(5, { schema, tablePrefix }));
      const t = `"${schema}"."${tablePrefix}`;
      await client.query(`INSERT INTO ${t}identities" (id, name, scopes, rate_limit, rate_window_seconds) VALUES ('key_lim', 'old', '{a}', 7, 60)`);
      await client.query(`INSERT INTO ${t}secrets" (digest, identity_id, last4) VALUES ('${'cd'.repeat(32)}', 'key_lim', 'abcd')`);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      expect((await store.findByDigest('cd'.repeat(32)))?.identity).toMatchObject({
        rateLimit: { limit: 7, windowSeconds: 60 },
        rateLimits: [{ limit: 7, windowSeconds: 60 }],
        quota: null,
      });
    });

    it('migration 9 upgrades a version-8 database: existing keys read as never reported, and record a leak', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await runScript(client, migrationSqlUpTo(8, { schema, tablePrefix }));
      const t = `"${schema}"."${tablePrefix}`;
      await client.query(`INSERT INTO ${t}identities" (id, name, scopes) VALUES ('key_leak', 'old', '{a}')`);
      await client.query(`INSERT INTO ${t}secrets" (digest, identity_id, last4) VALUES ('${'ef'.repeat(32)}', 'key_leak', 'abcd')`);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      expect((await store.findByDigest('ef'.repeat(32)))?.identity).not.toHaveProperty('leakedAt');
      expect(await store.recordLeak?.('key_leak', new Date(T_LEAK), 'https://github.com/o/r')).toBe(true);
      expect((await store.getIdentity('key_leak'))?.identity).toMatchObject({ leakedAt: new Date(T_LEAK), leakUrl: 'https://github.com/o/r' });
      await expect(client.query(`UPDATE ${t}identities" SET leak_url = $1`, [`https://x/${'a'.repeat(2048)}`])).rejects.toThrow(/check/i);
    });

    it('migration 13 upgrades a version-12 database: keys get their owner row\'s incarnation, a key older than its owner row (an earlier owner\'s) has none and no owner', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await runScript(client, migrationSqlUpTo(12, { schema, tablePrefix }));
      const t = `"${schema}"."${tablePrefix}`;
      await client.query(`INSERT INTO ${t}owners" (id, created_at) VALUES ('cus_re', '2030-01-02T00:00:00Z')`);
      await client.query(`INSERT INTO ${t}identities" (id, name, scopes, owner_id, created_at) VALUES ('key_old', 'old', '{a}', 'cus_re', '2030-01-01T00:00:00Z'), ('key_new', 'new', '{a}', 'cus_re', '2030-01-03T00:00:00Z')`);
      await client.query(`INSERT INTO ${t}secrets" (digest, identity_id, last4) VALUES ('${'a1'.repeat(32)}', 'key_old', 'abcd'), ('${'b2'.repeat(32)}', 'key_new', 'efgh')`);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      const owner = await store.getOwner?.('cus_re');
      expect(owner?.incarnation).toEqual(expect.any(String));
      expect((await store.getIdentity('key_new'))?.identity.ownerIncarnation).toBe(owner?.incarnation);
      expect((await store.findByDigest('b2'.repeat(32)))?.owner?.id).toBe('cus_re');
      expect((await store.getIdentity('key_old'))?.identity).not.toHaveProperty('ownerIncarnation');
      expect((await store.findByDigest('a1'.repeat(32)))?.owner).toBeNull();
      // Deleting the owner revokes both, whichever incarnation they were issued for.
      expect(await store.deleteOwner?.('cus_re', new Date(T_LEAK))).toBe(true);
      expect((await store.listIdentities({ take: 10, ownerId: 'cus_re' })).keys.map((k) => k.identity.revokedAt)).toEqual([new Date(T_LEAK), new Date(T_LEAK)]);
    });

    it('migration 10 upgrades a version-8 database: owners read with no quota, then keep one', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await runScript(client, migrationSqlUpTo(8, { schema, tablePrefix }));
      const t = `"${schema}"."${tablePrefix}`;
      await client.query(`INSERT INTO ${t}owners" (id) VALUES ('cus_old')`);
      await migrate(client, { schema, tablePrefix });
      expect(await versions(client, schema, tablePrefix)).toEqual(ALL_VERSIONS);
      expect(ALL_VERSIONS.at(-1)).toEqual({ version: SCHEMA_VERSION });
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      expect(await store.getOwner?.('cus_old')).toMatchObject({ id: 'cus_old', quota: null });
      const quota = { remaining: 500, refill: { amount: 500, interval: 'daily' as const }, setAt: new Date(1_750_000_000_123) };
      expect((await store.updateOwner?.('cus_old', { quota }))?.quota).toEqual(quota);
      expect((await store.getOwner?.('cus_old'))?.quota).toEqual(quota);
      const fresh = { id: 'cus_new', metadata: {}, rateLimits: null, quota: { remaining: 3, refill: null, setAt: new Date(1_750_000_000_999) }, createdAt: new Date(1_750_000_001_000), disabledAt: null };
      expect(await store.insertOwner?.(fresh)).toBe(true);
      expect(await store.getOwner?.('cus_new')).toEqual({ ...fresh, incarnation: expect.any(String) });
      expect((await store.listOwners?.({ take: 10 }))?.owners.map((o) => o.quota)).toEqual([quota, fresh.quota]);
      expect((await store.updateOwner?.('cus_new', { quota: null }))?.quota).toBeNull();
    });

    it('creates the tables and indexes in the configured schema, under the prefix', async () => {
      const { client, schema } = backend();
      const tablePrefix = freshPrefix();
      await migrate(client, { schema, tablePrefix });
      const { rows } = await client.query(
        `SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename LIKE $2
         UNION ALL SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE $2 ORDER BY 1`,
        [schema, `${tablePrefix}%`],
      );
      expect(rows.map((r: { name: string }) => r.name.slice(tablePrefix.length))).toEqual([
        'audit',
        'audit_at_id_idx',
        'audit_pkey',
        'audit_target_idx',
        'identities',
        'identities_created_at_id_idx',
        'identities_owner_id_idx',
        'identities_pkey',
        'migrations',
        'migrations_pkey',
        'owners',
        'owners_created_at_id_idx',
        'owners_pkey',
        'quotas',
        'quotas_pkey',
        'role_grants',
        'role_grants_pkey',
        'role_grants_role_name_idx',
        'roles',
        'roles_pkey',
        'secrets',
        'secrets_identity_id_idx',
        'secrets_pkey',
        'usage',
        'usage_bucket_idx',
        'usage_coarse_idx',
        'usage_flushes',
        'usage_flushes_pkey',
        'usage_owner_id_idx',
        'usage_pkey',
      ]);
    });

    it('creates a missing schema', async () => {
      const { client, schema } = backend();
      const other = `${schema}_x`;
      try {
        await migrate(client, { schema: other, tablePrefix: 'k_' });
        const store = createPostgresKeyStore({ client, schema: other, tablePrefix: 'k_' });
        expect(await store.listIdentities({ take: 1, withTotal: true })).toEqual({ keys: [], total: 0 });
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${other}" CASCADE`);
      }
    });

    it('exports the same script it runs, taking the advisory lock first', () => {
      const sql = migrationSql({ schema: 'auth', tablePrefix: 'api_' });
      const statements = sql.split('\n').filter((line) => line !== '' && !line.startsWith('--'));
      expect(statements[0]).toMatch(/^SELECT pg_advisory_xact_lock\(/);
      expect(sql).toContain('CREATE TABLE IF NOT EXISTS "auth"."api_identities"');
    });
  });
}
