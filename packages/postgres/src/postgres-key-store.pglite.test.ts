import type { PGlite } from '@electric-sql/pglite';
import { createPglite } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate } from './migrate.ts';
import { randomDigest } from './key-store-fixtures.test-support.ts';
import { describePostgresKeyStore } from './postgres-key-store.contract.ts';
import { expectUnavailable, freshPrefix } from './postgres-fixtures.test-support.ts';

// One embedded database for the whole file: starting PGlite takes seconds.
let db: PGlite;
beforeAll(async () => {
  db = await createPglite();
}, 60_000);
afterAll(async () => {
  if (!db.closed) await db.close();
});

describePostgresKeyStore('PGlite', () => ({ client: db, schema: 'keyset_test' }));

describe('PGlite closed under the store', () => {
  it('rejects with KeysetError("unavailable")', async () => {
    const closing = await createPglite();
    const tablePrefix = freshPrefix();
    await migrate(closing, { tablePrefix });
    const store = createPostgresKeyStore({ client: closing, tablePrefix });
    await closing.close();
    const digest = randomDigest();
    const error = expectUnavailable(await store.findByDigest(digest).catch((e: unknown) => e), [digest]);
    expect(error.code).toBe('unavailable');
  }, 60_000);
});
