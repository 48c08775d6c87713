/**
 * The PostgreSQL store's own suite, run by each backend's test file (PGlite, a real
 * server through node-postgres): the shared `KeyStore` contract over fresh tables per
 * test, plus what only a SQL store has (migrations, schema placement, precision of
 * timestamps written by other SQL, driver failures). Not a test file itself.
 * @module
 */
import { inspect } from 'node:util';
import { ConfigError, createKeyAdmin, createKeyring, isKeysetError } from '@keyset/core';
import { describe, expect, it } from 'vitest';
import { rejection } from '@keyset/test-support';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate } from './migrate.ts';
import { describeKeyStoreContract } from './key-store.contract.ts';
import { makeIdentity, makeSecret, randomDigest, walkCursor } from './key-store-fixtures.test-support.ts';
import { describeMigrate } from './postgres-migrate.contract.ts';
import { countingClient, expectUnavailable, freshPrefix, type PostgresBackend } from './postgres-fixtures.test-support.ts';

/**
 * Registers the contract and the PostgreSQL-specific tests for one backend. `backend`
 * is called inside the tests, after the file's `beforeAll` has connected.
 *
 * @example
 * ```ts
 * describePostgresKeyStore('PGlite', () => ({ client: db, schema: 'public' }));
 * ```
 */
export function describePostgresKeyStore(name: string, backend: () => PostgresBackend): void {
  describeKeyStoreContract(name, async () => {
    const { client, schema } = backend();
    const tablePrefix = freshPrefix();
    await migrate(client, { schema, tablePrefix });
    const counting = countingClient(client);
    return { store: createPostgresKeyStore({ client: counting.client, schema, tablePrefix }), roundTrips: counting.count };
  });

  describe(`PostgreSQL key store: ${name}`, () => {
    describeMigrate(backend);

    describe('timestamps written by other SQL', () => {
      it('are stored at the precision of a Date, so cursors built from them stay exact', async () => {
        const { client, schema } = backend();
        const tablePrefix = freshPrefix();
        await migrate(client, { schema, tablePrefix });
        const store = createPostgresKeyStore({ client, schema, tablePrefix });
        const table = `"${schema}"."${tablePrefix}identities"`;
        // Five rows within one millisecond (by microseconds), one rounding up, one from now().
        await client.query(
          `INSERT INTO ${table} (id, name, scopes, created_at) VALUES
             ('key_a', 'a', '{}', '2024-05-06 07:08:09.123456+00'), ('key_b', 'b', '{}', '2024-05-06 07:08:09.123001+00'),
             ('key_c', 'c', '{}', '2024-05-06 07:08:09.123499+00'), ('key_d', 'd', '{}', '2024-05-06 09:08:09.123+02'),
             ('key_e', 'e', '{}', '2024-05-06 07:08:09.1235+00'), ('key_f', 'f', '{}', '2024-05-06 07:08:09.122999+00')`,
        );
        await client.query(`INSERT INTO ${table} (id, name, scopes) VALUES ('key_now', 'now', '{}')`);
        const { rows } = await client.query(
          `SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'HH24:MI:SS.US') AS t FROM ${table} WHERE id <> 'key_now' ORDER BY id`,
        );
        expect(rows).toEqual([
          { id: 'key_a', t: '07:08:09.123000' },
          { id: 'key_b', t: '07:08:09.123000' },
          { id: 'key_c', t: '07:08:09.123000' },
          { id: 'key_d', t: '07:08:09.123000' },
          { id: 'key_e', t: '07:08:09.124000' },
          { id: 'key_f', t: '07:08:09.123000' },
        ]);
        const ms = Date.parse('2024-05-06T07:08:09.123Z');
        expect((await store.getIdentity('key_a'))?.identity.createdAt).toEqual(new Date(ms));
        for (const size of [1, 2, 3]) {
          const walked = (await walkCursor(store, size)).map((k) => k.identity.id);
          expect(walked).toEqual(['key_now', 'key_e', 'key_f', 'key_d', 'key_c', 'key_b', 'key_a']);
        }
      });
    });

    describe('the largest values the keyring accepts', () => {
      // The keyring's bounds are what this store holds: the first value past each one was
      // a 503 from the database (year 10000, an int4 overflow), now a 400 before any query.
      it('round-trip exactly; the next ones are refused with 400 naming the field, never reaching the database', async () => {
        const { client, schema } = backend();
        const tablePrefix = freshPrefix();
        await migrate(client, { schema, tablePrefix });
        const store = createPostgresKeyStore({ client, schema, tablePrefix });
        const keyring = createKeyring({ store, prefix: 'acme_test', cache: false });
        const admin = createKeyAdmin(keyring);
        try {
          const limits = [
            { name: 'day', limit: 2_147_483_647, windowSeconds: 86_400 },
            { name: 'year', limit: 2_147_483_647, windowSeconds: 31_622_400 },
          ];
          const { key, record } = await admin.issue({
            name: `\u{1F511} ${'n'.repeat(197)}`,
            scopes: ['orders:read'],
            expiresAt: '9999-12-31T23:59:59.999Z',
            rateLimits: limits,
            quota: { remaining: 1e15, refill: { amount: 1e15, interval: 31_622_400 } },
          });
          const read = await admin.get(record.id);
          expect(read.expiresAt?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
          expect(read.name).toBe(record.name);
          expect(read.rateLimits).toEqual(limits);
          expect(read.quota?.remaining).toBe(1e15);
          expect((await keyring.verify(key)).id).toBe(record.id);
          const refused: [object, string][] = [
            [{ expiresAt: '9999-12-31T23:59:59-23:59' }, 'expiresAt'],
            [{ expiresAt: new Date(8.64e15) }, 'expiresAt'],
            [{ name: 'a\u0000' }, 'name'],
            [{ name: 'a\ud800' }, 'name'],
            [{ rateLimit: { limit: 2_147_483_648, windowSeconds: 86_400 } }, 'rateLimit.limit'],
          ];
          for (const [input, field] of refused) {
            const error = await rejection(admin.issue({ name: 'n', scopes: [], ...input }));
            expect([isKeysetError(error) && error.code, isKeysetError(error) && error.extensions.field]).toEqual(['invalid_request', field]);
          }
          const error = await rejection(admin.updateLimits(record.id, { rateLimit: { limit: 3e9, windowSeconds: 86_400 } }));
          expect(isKeysetError(error) && error.extensions.field).toBe('rateLimit.limit');
          expect((await admin.list({ mode: 'offset', limit: 10 })).total).toBe(1);
        } finally {
          await keyring.close();
        }
      });
    });

    describe('database failures', () => {
      it('reject a store never migrated with a ConfigError naming migrate(), the driver error as cause, no digest anywhere', async () => {
        const { client, schema } = backend();
        const store = createPostgresKeyStore({ client, schema, tablePrefix: freshPrefix() }); // not migrated
        const expectMigrateError = (error: unknown, secrets: readonly string[]): void => {
          expect(error).toBeInstanceOf(ConfigError);
          expect((error as Error).message).toMatch(/run `await migrate\(client\)` from @keyset\/postgres/);
          expect((error as Error).cause).toMatchObject({ code: '42P01' }); // undefined_table
          const everything = `${String(error)} ${inspect(error, { depth: 10, showHidden: true })}`;
          for (const secret of secrets) expect(everything).not.toContain(secret);
        };
        const digest = randomDigest();
        expectMigrateError(await rejection(store.findByDigest(digest)), [digest]);
        const batch = [randomDigest(), randomDigest()];
        expectMigrateError(await rejection(store.touchLastUsed(batch.map((d) => ({ digest: d, at: new Date() })))), batch);
        const secret = makeSecret();
        expectMigrateError(await rejection(store.insertIdentity(makeIdentity(), secret)), [secret.digest]);
      });

      it('keep a duplicate digest out of the error, although PostgreSQL echoes it in `detail`', async () => {
        const { client, schema } = backend();
        const tablePrefix = freshPrefix();
        await migrate(client, { schema, tablePrefix });
        const store = createPostgresKeyStore({ client, schema, tablePrefix });
        const secret = makeSecret();
        await store.insertIdentity(makeIdentity(), secret);
        const error = expectUnavailable(await rejection(store.insertIdentity(makeIdentity(), { ...secret })), [secret.digest]);
        expect(error.cause).toMatchObject({ code: '23505' }); // unique_violation
        expect(inspect(error.cause)).toContain('[redacted]');
        const rotated = expectUnavailable(
          await rejection(store.addSecret((await store.findByDigest(secret.digest))!.identity.id, { ...secret }, new Date())),
          [secret.digest],
        );
        expect(rotated.cause).toMatchObject({ code: '23505' });
      });
    });
  });
}
