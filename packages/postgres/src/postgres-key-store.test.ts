// Option validation: no database needed, every mistake fails when the factory runs.
import { ConfigError } from '@keyset/core';
import { describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate, migrationSql } from './migrate.ts';
import type { Queryable } from './queryable.ts';

const client: Queryable = {
  query: () => Promise.reject(new Error('no query expected')),
};

describe('createPostgresKeyStore options', () => {
  it.each(['Public', 'a-b', '1abc', 'x;drop table y', 'x"y', '', 'ü', 'a'.repeat(64)])('rejects schema %j', (schema) => {
    expect(() => createPostgresKeyStore({ client, schema })).toThrow(ConfigError);
    expect(() => migrationSql({ schema })).toThrow(/schema must match/);
  });

  it.each(['Keyset_', 'key-set_', '9_', '', 'a'.repeat(36)])('rejects tablePrefix %j', (tablePrefix) => {
    expect(() => createPostgresKeyStore({ client, tablePrefix })).toThrow(ConfigError);
    expect(() => migrationSql({ tablePrefix })).toThrow(/tablePrefix must match/);
  });

  it('rejects a client without query()', () => {
    expect(() => createPostgresKeyStore({ client: {} as Queryable })).toThrow(/client must have a query/);
  });

  it('accepts the defaults and a 35-character prefix, and returns a frozen store', () => {
    const store = createPostgresKeyStore({ client });
    expect(Object.isFrozen(store)).toBe(true);
    expect(() => createPostgresKeyStore({ client, schema: 'auth_2', tablePrefix: `${'a'.repeat(34)}_` })).not.toThrow();
  });

  it('validates before touching the database', async () => {
    await expect(migrate(client, { schema: 'Bad' })).rejects.toThrow(ConfigError);
  });

  it('does not mutate the options', () => {
    const options = Object.freeze({ client, schema: 'auth' });
    expect(() => createPostgresKeyStore(options)).not.toThrow();
  });
});

describe('migrationSql', () => {
  it('quotes every name and uses the defaults', () => {
    const sql = migrationSql();
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "public"."keyset_identities"');
    expect(sql).toContain('REFERENCES "public"."keyset_identities" (id) ON DELETE CASCADE');
    expect(sql).toContain('"keyset_identities_created_at_id_idx" ON "public"."keyset_identities" (created_at DESC, id DESC)');
    expect(sql).not.toMatch(/[^"]\bkeyset_secrets\b[^"]/);
  });
});
