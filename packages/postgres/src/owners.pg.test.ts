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

  it('keys issued while their owner is deleted, from two instances: each is revoked by the delete or refused, and none verifies once the id is created again', async () => {
    const store = await storeOn(kind);
    const [one, two] = [createKeyring({ store, prefix: 'acme_test' }), createKeyring({ store, prefix: 'acme_test' })];
    const owners = createOwnerAdmin(one);
    for (let round = 0; round < 4; round++) {
      const id = `cus_race_${round}`;
      await owners.create({ id });
      const issues = Array.from({ length: 10 }, (_, n) => createKeyAdmin(n % 2 === 0 ? one : two).issue({ name: `k${n}`, scopes: ['x'], ownerId: id }));
      const [settled] = await Promise.all([Promise.allSettled(issues), owners.delete(id)]);
      const issued = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      for (const r of settled) if (r.status === 'rejected') expect(isKeysetError(r.reason) && r.reason.code === 'invalid_request' && r.reason.extensions['field'] === 'ownerId').toBe(true);
      for (const key of issued) expect((await createKeyAdmin(one).get(key.record.id)).revokedAt, `${key.record.id} issued for deleted ${id}`).not.toBeNull();
      await owners.create({ id });
      // A keyring with nothing cached, as an instance started after the delete.
      const fresh = createKeyring({ store, prefix: 'acme_test' });
      for (const key of issued) expect(await code(fresh.verify(key.key))).toBe('invalid_api_key');
    }
  });

  it('a key whose owner is deleted and created again between the owner read and the insert is refused, and nothing is stored', async () => {
    const store = await storeOn(kind);
    const owners = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test' }));
    await owners.create({ id: 'cus_again' });
    // The real store, with the owner deleted and created again right after issue() reads it.
    let raced = false;
    const racing: KeyStore = {
      ...store,
      async getOwner(id) {
        const owner = await store.getOwner!(id);
        if (!raced) {
          raced = true;
          await owners.delete(id);
          await owners.create({ id });
        }
        return owner;
      },
    };
    const keyring = createKeyring({ store: racing, prefix: 'acme_test' });
    const refused = await createKeyAdmin(keyring).issue({ name: 'late', scopes: ['x'], ownerId: 'cus_again' }).catch((error: unknown) => error);
    expect(isKeysetError(refused) && refused.code).toBe('invalid_request');
    expect(isKeysetError(refused) && refused.extensions['field']).toBe('ownerId');
    expect((await owners.listKeys('cus_again', { mode: 'offset', limit: 10, offset: 0 })).total).toBe(0);
    // The new owner itself gets keys as usual.
    const key = await createKeyAdmin(keyring).issue({ name: 'now', scopes: ['x'], ownerId: 'cus_again' });
    expect((await keyring.verify(key.key)).owner?.id).toBe('cus_again');
  });

  it('two instances disabling one owner at once keep the first instant, and both answer with it', async () => {
    const store = await storeOn(kind);
    const T1 = Date.UTC(2026, 0, 1);
    const T2 = T1 + 60_000;
    // Two instances over one store, each with its own clock.
    const first = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T1 }));
    const second = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T2 }));
    await first.create({ id: 'cus_d' });
    const [a, b] = await Promise.all([first.update('cus_d', { disabled: true }), second.update('cus_d', { disabled: true })]);
    const stored = (await first.get('cus_d')).disabledAt;
    expect([T1, T2]).toContain(stored?.getTime());
    expect(a.disabledAt).toEqual(stored);
    expect(b.disabledAt).toEqual(stored);
    // Disabling again later keeps it; enabling clears it, and the next disable is a new instant.
    const later = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T2 + 60_000 }));
    expect((await later.update('cus_d', { disabled: true })).disabledAt).toEqual(stored);
    expect((await later.update('cus_d', { disabled: false })).disabledAt).toBeNull();
    expect((await later.update('cus_d', { disabled: true })).disabledAt).toEqual(new Date(T2 + 60_000));
  });

  it('two quota updates at once keep the refill left out, and the later one gets a later setAt (so its count restarts)', async () => {
    const store = await storeOn(kind);
    const T0 = Date.UTC(2026, 0, 1);
    const T = T0 + 1000;
    const creator = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T0 }));
    await creator.create({ id: 'cus_r', quota: { remaining: 5, refill: { amount: 5, interval: 'daily' } } });
    const [one, two] = [0, 1].map(() => createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T })));
    const results = await Promise.all([one!.update('cus_r', { quota: { remaining: 7 } }), two!.update('cus_r', { quota: { remaining: 9 } })]);
    const setAts = results.map((r) => r.quota!.setAt.getTime()).sort((x, y) => x - y);
    expect(setAts).toEqual([T, T + 1]);
    for (const r of results) expect(r.quota!.refill).toEqual({ amount: 5, interval: 'daily' });
    const last = results.find((r) => r.quota!.setAt.getTime() === T + 1)!;
    expect((await creator.get('cus_r')).quota).toEqual(last.quota);
    // `refill: null` removes it; a later update without `refill` keeps none.
    expect((await one!.update('cus_r', { quota: { remaining: 1, refill: null } })).quota).toMatchObject({ remaining: 1, refill: null, setAt: new Date(T + 2) });
    expect((await one!.update('cus_r', { quota: { remaining: 2 } })).quota).toMatchObject({ remaining: 2, refill: null });
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

describe.skipIf(url === undefined)('owner updates on a PostgreSQL server, forced to interleave', () => {
  it('two disables held behind a row lock until both have read the owner still apply the first instant', async () => {
    const client = pool as pg.Pool;
    const tablePrefix = `o${n++}_`;
    await migrate(client, { schema, tablePrefix });
    const store = createPostgresKeyStore({ client, schema, tablePrefix });
    const T1 = Date.UTC(2026, 0, 1);
    const T2 = T1 + 60_000;
    const first = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T1 }));
    const second = createOwnerAdmin(createKeyring({ store, prefix: 'acme_test', clock: () => T2 }));
    await first.create({ id: 'cus_lock' });
    // Another session holds the owner's row: reads go through, both UPDATEs queue behind it.
    const holder = await client.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}"."${tablePrefix}owners" WHERE id = 'cus_lock' FOR UPDATE`);
      const updates = Promise.all([first.update('cus_lock', { disabled: true }), second.update('cus_lock', { disabled: true })]);
      // Released only once both updates wait on the lock, whatever each read before. Asked
      // outside the holder's transaction, which sees one snapshot of pg_stat_activity.
      for (;;) {
        const { rows } = await client.query(
          `SELECT count(*)::int AS waiting FROM pg_catalog.pg_stat_activity WHERE datname = pg_catalog.current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
          [`%UPDATE "${schema}"."${tablePrefix}owners"%`],
        );
        if (rows[0].waiting === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.query('COMMIT');
      const [a, b] = await updates;
      const stored = (await first.get('cus_lock')).disabledAt;
      expect([T1, T2]).toContain(stored?.getTime());
      expect([a.disabledAt, b.disabledAt]).toEqual([stored, stored]);
    } finally {
      holder.release();
    }
  });
});
