import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuditStoreContract, makeEntry } from './audit-store.contract.ts';
import { migrate } from './migrate.ts';
import { createPostgresAuditStore } from './postgres-audit-store.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { freshPrefix } from './postgres-fixtures.test-support.ts';

// One embedded database for the whole file: starting PGlite takes seconds.
let db: PGlite;
beforeAll(async () => {
  db = await createPglite();
}, 60_000);
afterAll(async () => {
  if (!db.closed) await db.close();
});

describeAuditStoreContract('PGlite', async () => {
  const tablePrefix = freshPrefix();
  await migrate(db, { schema: 'keyset_audit', tablePrefix });
  const options = { client: db, schema: 'keyset_audit', tablePrefix };
  return { store: createPostgresKeyStore(options), audit: createPostgresAuditStore(options) };
});

describe('PGlite audit table', () => {
  it('refuses an UPDATE of an entry: history cannot be rewritten', async () => {
    const tablePrefix = freshPrefix();
    await migrate(db, { tablePrefix });
    const audit = createPostgresAuditStore({ client: db, tablePrefix });
    const entry = makeEntry();
    await audit.append(entry);
    await expect(db.query(`UPDATE "public"."${tablePrefix}audit" SET actor = 'mallory'`)).rejects.toThrow(/append-only/);
    expect((await audit.list({ take: 10 })).entries).toEqual([entry]);
  });
});
