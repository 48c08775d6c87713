import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuditStoreContract, makeEntry } from './audit-store.contract.ts';
import { migrate } from './migrate.ts';
import { createPostgresAuditStore } from './postgres-audit-store.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { freshPrefix } from './postgres-fixtures.test-support.ts';
import { makeIdentity, makeSecret } from './key-store-fixtures.test-support.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_audit');

describe.skipIf(url === undefined)('audit log on a real PostgreSQL server', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: url, max: 8 });
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  describeAuditStoreContract('PostgreSQL (pg Pool)', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const options = { client: pool, schema, tablePrefix };
    return { store: createPostgresKeyStore(options), audit: createPostgresAuditStore(options) };
  });

  // Concurrent changes on a pool (each on its own connection): every change and only the
  // changes that applied leave an entry, whatever interleaving the server picks.
  it('keeps change and entry together under concurrent revocations of one key', async () => {
    const tablePrefix = freshPrefix();
    await migrate(pool, { schema, tablePrefix });
    const options = { client: pool, schema, tablePrefix };
    const store = createPostgresKeyStore(options);
    const audit = createPostgresAuditStore(options);
    const identity = makeIdentity();
    await store.insertIdentity(identity, makeSecret());
    const taken = makeEntry();
    await audit.append(taken);
    const entries = Array.from({ length: 8 }, (_, n) => (n % 2 === 0 ? makeEntry({ id: taken.id }) : makeEntry({ action: 'key.revoked' })));
    const results = await Promise.allSettled(entries.map((e, n) => store.revoke(identity.id, new Date(Date.UTC(2030, 0, 1, 0, 0, n)), e)));
    expect(results.map((r) => r.status)).toEqual(entries.map((_, n) => (n % 2 === 0 ? 'rejected' : 'fulfilled')));
    const listed = (await audit.list({ take: 100 })).entries.map((e) => e.id).sort();
    expect(listed).toEqual([taken.id, ...entries.filter((_, n) => n % 2 === 1).map((e) => e.id)].sort());
    await expect(pool.query(`UPDATE "${schema}"."${tablePrefix}audit" SET actor = 'mallory'`)).rejects.toThrow(/append-only/);
  });
});
