/**
 * Owners on PostgreSQL (migration 8, their quota migration 10), on a real server and on PGlite, and the memory store
 * for comparison: through the keyring and createOwnerAdmin, as an application uses them.
 */
import type { PGlite } from '@electric-sql/pglite';
import {
  createApiKeyGuard,
  createKeyAdmin,
  createKeyring,
  createMemoryKeyStore,
  createMemoryQuotaStore,
  createOwnerAdmin,
  createRateLimiter,
  isKeysetError,
  type KeyStore,
  type QuotaStore,
} from '@keyset/core';
import { postgresUrl, uniqueSchema, createPglite } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { createPostgresQuotaStore } from './postgres-quota-store.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_owners');
let pool: pg.Pool | undefined;
let lite: PGlite;
let n = 0;

beforeAll(async () => {
  lite = await createPglite();
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
  return (await storesOn(kind)).keys;
}

/** A key store and a quota store over one backend (the memory ones for `memory`). */
async function storesOn(kind: string): Promise<{ keys: KeyStore; quotas: QuotaStore }> {
  if (kind === 'memory') return { keys: createMemoryKeyStore(), quotas: createMemoryQuotaStore() };
  const tablePrefix = `o${n++}_`;
  const client = kind === 'pglite' ? lite : (pool as pg.Pool);
  await migrate(client, { schema, tablePrefix });
  return { keys: createPostgresKeyStore({ client, schema, tablePrefix }), quotas: createPostgresQuotaStore({ client, schema, tablePrefix }) };
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
    expect(verified.owner).toEqual({ id: 'cus_1', metadata: { plan: 'pro', seats: 3 }, rateLimits: [{ name: 'minute', limit: 60, windowSeconds: 60 }], quota: null });
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

  it("keeps an owner's quota; owner quota 5, three keys: 5 requests admitted, the 6th refused whichever key sends it, nothing spent by it", async () => {
    const { keys: store, quotas } = await storesOn(kind);
    const keyring = createKeyring({ store, prefix: 'acme_test' });
    const keys = createKeyAdmin(keyring);
    const owners = createOwnerAdmin(keyring);
    const created = await owners.create({ id: 'cus_q', quota: { remaining: 5 } });
    expect(created.quota).toMatchObject({ remaining: 5, refill: null });
    expect(await owners.get('cus_q')).toEqual(created);
    const limiter = createRateLimiter({ defaultPolicy: { limit: 1000, windowSeconds: 60 }, quotaStore: quotas, logger: { warn() {} } });
    const guard = createApiKeyGuard({ keyring, limiter });
    // The third key has a quota of its own too (2), spent with the owner's.
    const issued = [
      await keys.issue({ name: 'a', scopes: [], ownerId: 'cus_q' }),
      await keys.issue({ name: 'b', scopes: [], ownerId: 'cus_q' }),
      await keys.issue({ name: 'c', scopes: [], ownerId: 'cus_q', quota: { remaining: 2 } }),
    ];
    const send = (i: number) => guard.check({ authorization: `ApiKey ${issued[i]!.key}` }, { scopes: [] });
    for (const i of [0, 1, 2, 0, 2]) await send(i);
    for (const i of [0, 1, 2]) {
      await expect(send(i)).rejects.toMatchObject({ code: 'quota_exhausted', status: 429, extensions: { quota: i === 2 ? 'key' : 'owner' } });
    }
    expect((await limiter.readOwnerQuota('cus_q', created.quota!)).remaining).toBe(0);
    const third = await keys.get(issued[2]!.record.id);
    expect((await limiter.readQuota(third.id, third.quota!, 'cus_q')).remaining).toBe(0);
    // Setting the owner's quota again restarts its count; the key's stays spent.
    const raised = await owners.update('cus_q', { quota: { remaining: 1 } });
    expect((await owners.get('cus_q')).quota).toEqual(raised.quota);
    await send(1);
    await expect(send(0)).rejects.toMatchObject({ code: 'quota_exhausted', extensions: { quota: 'owner', quota_remaining: 0 } });
  });
});
