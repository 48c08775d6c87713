/**
 * The core keyring over this store on PGlite, end to end: issue → verify → rotate (both
 * secrets during the overlap, only the new one after) → revoke, last-use flush on close,
 * and a database failure surfacing as 503.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite, rejectionOf } from '@keyset/test-support';
import { AuthenticationError, createKeyAdmin, createKeyring, isKeysetError, type Keyring } from '@keyset/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { migrate } from './migrate.ts';

let db: PGlite;
beforeAll(async () => {
  db = await createPglite();
  await migrate(db, { schema: 'auth' });
}, 60_000);
afterAll(async () => {
  if (!db.closed) await db.close();
});

const refusal = (promise: Promise<unknown>): Promise<AuthenticationError> => rejectionOf(promise, AuthenticationError);

describe('keyring over the PostgreSQL store (PGlite)', () => {
  let now = Date.parse('2025-06-01T12:00:00.000Z');
  let keyring: Keyring;
  const store = () => createPostgresKeyStore({ client: db, schema: 'auth' });

  beforeAll(() => {
    // No cache: every verification reaches the database.
    keyring = createKeyring({ store: store(), prefix: 'acme_test', clock: () => now, cache: false });
  });

  it('issues, verifies, rotates with overlap, revokes, and flushes last use on close', async () => {
    const { key, record } = await createKeyAdmin(keyring).issue({
      name: 'reporting',
      scopes: ['orders:read'],
      rateLimit: { limit: 100, windowSeconds: 60 },
    });
    expect(record.secrets).toHaveLength(1);
    const verified = await keyring.authenticate({ authorization: `ApiKey ${key}`, url: 'http://x/api/orders' }, { scopes: ['orders:read'] });
    expect(verified).toMatchObject({ id: record.id, scopes: ['orders:read'], rateLimit: { limit: 100, windowSeconds: 60 } });
    expect(verified.last4).toBe(key.slice(-4));

    now += 1000;
    const rotated = await createKeyAdmin(keyring).rotate(record.id, { overlapSeconds: 60 });
    expect(rotated.key).not.toBe(key);
    expect((await keyring.verify(key)).id).toBe(record.id); // overlap: both work
    expect((await keyring.verify(rotated.key)).id).toBe(record.id);
    const during = await createKeyAdmin(keyring).get(record.id);
    expect(during.secrets.map((s) => s.last4)).toEqual([rotated.key.slice(-4), key.slice(-4)]);
    expect(during.secrets[1]?.expiresAt).toEqual(new Date(now + 60_000));

    now += 61_000;
    expect((await refusal(keyring.verify(key))).reason).toBe('expired');
    expect((await keyring.verify(rotated.key)).id).toBe(record.id);

    const listed = await createKeyAdmin(keyring).list({ mode: 'offset', limit: 10, offset: 0 });
    expect(listed.records.map((r) => r.id)).toContain(record.id);

    await createKeyAdmin(keyring).revoke(record.id);
    expect((await refusal(keyring.verify(rotated.key))).reason).toBe('revoked');
    expect((await createKeyAdmin(keyring).get(record.id)).revokedAt).toEqual(new Date(now));
    await expect(createKeyAdmin(keyring).rotate(record.id, { overlapSeconds: 0 })).rejects.toMatchObject({ code: 'invalid_request' });

    await keyring.close();
    const stored = await store().getIdentity(record.id);
    expect(stored?.secrets.every((s) => s.lastUsedAt !== null)).toBe(true);
  });

  it('fails closed with 503 when the database is gone', async () => {
    const fresh = createKeyring({ store: store(), prefix: 'acme_test', clock: () => now, cache: false, lastUsed: false });
    const { key } = await createKeyAdmin(fresh).issue({ name: 'doomed', scopes: [] });
    await db.close();
    const error = await fresh.verify(key).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isKeysetError(error) && error.status).toBe(503);
    expect(String((error as Error).message)).not.toContain(key);
  });
});
