/**
 * A store whose tables were never migrated (or were migrated by an older version) fails
 * with a `ConfigError` that says to run `migrate()`, on the first query, through the
 * keyring and the guard as well: not a 503 "try again shortly" with the database's words
 * two `cause`s down. A real outage is still `unavailable` (postgres-key-store.pglite.test.ts).
 * On PGlite always, and on a real PostgreSQL server when one answers.
 */
import type { PGlite } from '@electric-sql/pglite';
import { ConfigError, createApiKeyGuard, createKeyAdmin, createKeyring, generateKey, isKeysetError } from '@keyset/core';
import { createPglite, postgresUrl, rejection, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { createPostgresQuotaStore } from './postgres-quota-store.ts';
import type { MultiStatementQueryable } from './queryable.ts';

const PREFIX = 'acme_live';

function expectMigrateHint(error: unknown): void {
  expect(error).toBeInstanceOf(ConfigError);
  expect(isKeysetError(error)).toBe(false);
  const { message } = error as ConfigError;
  expect(message).toContain('run `await migrate(client)` from @keyset/postgres');
  expect(message).toContain('migrationSql()');
  // The database's words, one level down, not two.
  expect((error as ConfigError).cause).toMatchObject({ code: expect.stringMatching(/^(42P01|42883|42703|3F000)$/) });
}

function describeMissingSchema(label: string, connect: () => { client: MultiStatementQueryable; schema: string }): void {
  describe(`${label}: keyset's tables never migrated`, () => {
    it('every store call rejects with a ConfigError naming migrate()', async () => {
      const { client, schema } = connect();
      const tablePrefix = `never_${Math.random().toString(36).slice(2, 8)}_`;
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      expectMigrateHint(await rejection(store.findByDigest('0'.repeat(64))));
      expectMigrateHint(await rejection(store.getIdentity('k_1')));
      expectMigrateHint(await rejection(store.listIdentities({ take: 10 })));
      expectMigrateHint(await rejection(store.revoke('k_1', new Date())));
      expectMigrateHint(await rejection(store.touchLastUsed([{ digest: '0'.repeat(64), at: new Date() }])));
      const quotas = createPostgresQuotaStore({ client, schema, tablePrefix });
      expectMigrateHint(await rejection(quotas.load('q')));
    });

    it('the first request through the keyring and the guard gets the ConfigError, not 503 unavailable', async () => {
      const { client, schema } = connect();
      const tablePrefix = `never_${Math.random().toString(36).slice(2, 8)}_`;
      const keyring = createKeyring({ store: createPostgresKeyStore({ client, schema, tablePrefix }), prefix: PREFIX, lastUsed: false });
      const authorization = `ApiKey ${generateKey(PREFIX)}`;
      expectMigrateHint(await rejection(keyring.authenticate({ authorization })));
      const guard = createApiKeyGuard({ keyring, refusedCredentials: false });
      expectMigrateHint(await rejection(guard.check({ authorization, url: '/api/orders' })));
      expectMigrateHint(await rejection(createKeyAdmin(keyring).issue({ name: 'first', scopes: [] })));
    });

    it('after migrate() the same store works: nothing of the failure is remembered', async () => {
      const { client, schema } = connect();
      const tablePrefix = `late_${Math.random().toString(36).slice(2, 8)}_`;
      const keyring = createKeyring({ store: createPostgresKeyStore({ client, schema, tablePrefix }), prefix: PREFIX, lastUsed: false });
      expectMigrateHint(await rejection(createKeyAdmin(keyring).issue({ name: 'first', scopes: [] })));
      await migrate(client, { schema, tablePrefix });
      const { key } = await createKeyAdmin(keyring).issue({ name: 'first', scopes: [] });
      expect((await keyring.authenticate({ authorization: `ApiKey ${key}` })).name).toBe('first');
    });

    it('tables from an older version (a column or function missing) get the same ConfigError', async () => {
      const { client, schema } = connect();
      const tablePrefix = `old_${Math.random().toString(36).slice(2, 8)}_`;
      await migrate(client, { schema, tablePrefix });
      // What version 5 and 6 added, taken away again.
      await client.query(`ALTER TABLE "${schema}"."${tablePrefix}identities" DROP COLUMN quota`);
      await client.query(`DROP FUNCTION "${schema}"."${tablePrefix}spend_quota"`);
      const store = createPostgresKeyStore({ client, schema, tablePrefix });
      expectMigrateHint(await rejection(store.findByDigest('0'.repeat(64))));
      const quotas = createPostgresQuotaStore({ client, schema, tablePrefix });
      expectMigrateHint(
        await rejection(quotas.spend({ key: 'q', generation: 1, initial: 5, period: 0, refillAmount: null, cost: 1 })),
      );
    });
  });
}

let lite: PGlite;
beforeAll(async () => {
  lite = await createPglite();
}, 60_000);
afterAll(async () => {
  if (!lite.closed) await lite.close();
});
describeMissingSchema('PGlite', () => ({ client: lite, schema: 'public' }));

const url = await postgresUrl();
const schema = uniqueSchema('keyset_missing');
describe.skipIf(url === undefined)('real server', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: url, max: 4 });
    await pool.query(`CREATE SCHEMA "${schema}"`);
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });
  describeMissingSchema('PostgreSQL (pg Pool)', () => ({ client: pool, schema }));

  it('a schema that does not exist at all: the same ConfigError', async () => {
    const store = createPostgresKeyStore({ client: pool, schema: `${schema}_nowhere` });
    expectMigrateHint(await rejection(store.findByDigest('0'.repeat(64))));
  });
});
