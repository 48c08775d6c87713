/**
 * Owners on PostgreSQL (migration 8), on a real server and on PGlite, and the memory store
 * for comparison: through the keyring and createOwnerAdmin, as an application uses them.
 */
import { PGlite } from '@electric-sql/pglite';
import { createKeyAdmin, createKeyring, createMemoryKeyStore, createOwnerAdmin, isKeysetError, type KeyStore } from '@keyset/core';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_owners');
let pool: pg.Pool | undefined;
let lite: PGlite;
let n = 0;

beforeAll(async () => {
  lite = await PGlite.create();
  if (url !== undefined) pool = new pg.Pool({ connectionString: url, max: 4 });
}, 60_000);
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
  if (!lite.closed) await lite.close();
});

const code = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (isKeysetError(error) ? error.code : String(error)),
  );

async function storeOn(kind: string): Promise<KeyStore> {
  if (kind === 'memory') return createMemoryKeyStore();
  const tablePrefix = `o${n++}_`;
  const client = kind === 'pglite' ? lite : (pool as pg.Pool);
  await migrate(client, { schema, tablePrefix });
  return createPostgresKeyStore({ client, schema, tablePrefix });
}

describe.each(['memory', 'pglite', ...(url === undefined ? [] : ['postgres'])])('owners on %s', (kind) => {
  it('stores owners, hands the owner to verified keys, pages owners and an owner\'s keys', async () => {
    const keyring = createKeyring({ store: await storeOn(kind), prefix: 'acme_test' });
    const keys = createKeyAdmin(keyring);
    const owners = createOwnerAdmin(keyring);
    const created = await owners.create({ id: 'cus_1', metadata: { plan: 'pro', seats: 3 }, rateLimits: [{ name: 'minute', limit: 60, windowSeconds: 60 }] });
    expect(await owners.get('cus_1')).toEqual(created);
    for (let i = 2; i <= 5; i++) await owners.create({ id: `cus_${i}` });
    const issued = await keys.issue({ name: 'a', scopes: ['x'], ownerId: 'cus_1' });
    await keys.issue({ name: 'b', scopes: ['x'], ownerId: 'cus_1' });
    await keys.issue({ name: 'c', scopes: ['x'] });
    const verified = await keyring.verify(issued.key);
    expect(verified.owner).toEqual({ id: 'cus_1', metadata: { plan: 'pro', seats: 3 }, rateLimits: [{ name: 'minute', limit: 60, windowSeconds: 60 }] });
    expect((await keys.get(issued.record.id)).ownerId).toBe('cus_1');
    const ownerKeys = await owners.listKeys('cus_1', { mode: 'offset', limit: 10, offset: 0 });
    expect(ownerKeys.total).toBe(2);
    expect(ownerKeys.records.map((r) => r.name).sort()).toEqual(['a', 'b']);
    const first = await owners.list({ mode: 'offset', limit: 2, offset: 0 });
    expect(first).toMatchObject({ total: 5, hasMore: true });
    const past = await owners.list({ mode: 'offset', limit: 2, offset: 9 });
    expect(past).toMatchObject({ total: 5, hasMore: false, records: [] });
    // Cursor pages: the last record of a page is where the next starts.
    const page1 = await owners.list({ mode: 'cursor', limit: 3 });
    const last = page1.records[2]!;
    const page2 = await owners.list({ mode: 'cursor', limit: 3, after: { createdAt: last.createdAt.toISOString(), id: last.id } });
    expect([...page1.records.slice(0, 3), ...page2.records].map((r) => r.id).sort()).toEqual(['cus_1', 'cus_2', 'cus_3', 'cus_4', 'cus_5']);
  });

  it('update changes metadata and limits; disabling refuses its keys; delete revokes them', async () => {
    const keyring = createKeyring({ store: await storeOn(kind), prefix: 'acme_test' });
    const keys = createKeyAdmin(keyring);
    const owners = createOwnerAdmin(keyring);
    await owners.create({ id: 'cus_9' });
    const a = await keys.issue({ name: 'a', scopes: [], ownerId: 'cus_9' });
    const updated = await owners.update('cus_9', { metadata: { tier: 2 }, rateLimits: [{ limit: 5, windowSeconds: 1 }] });
    expect(updated).toMatchObject({ metadata: { tier: 2 }, rateLimits: [{ limit: 5, windowSeconds: 1 }], disabledAt: null });
    expect((await keyring.verify(a.key)).owner?.metadata).toEqual({ tier: 2 });
    await owners.update('cus_9', { disabled: true });
    expect(await code(keyring.verify(a.key))).toBe('invalid_api_key');
    await owners.update('cus_9', { disabled: false });
    expect(await code(keyring.verify(a.key))).toBe('ok');
    await owners.delete('cus_9');
    expect(await code(keyring.verify(a.key))).toBe('invalid_api_key');
    expect((await keys.get(a.record.id)).revokedAt).not.toBeNull();
    expect(await code(owners.get('cus_9'))).toBe('not_found');
    // A new owner of the same id does not bring the revoked key back.
    await owners.create({ id: 'cus_9' });
    expect(await code(keyring.verify(a.key))).toBe('invalid_api_key');
  });
});
