import { describe, expect, it } from 'vitest';
import { KeysetError } from '../errors.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createKeyring } from '../auth/keyring.ts';
import { createMemoryKeyStore } from '../keys/memory-key-store.ts';
import { createOwnerAdmin } from './owner-admin.ts';

function setup() {
  const store = createMemoryKeyStore();
  const keyring = createKeyring({ store, prefix: 'acme_test' });
  return { store, keyring, keys: createKeyAdmin(keyring), owners: createOwnerAdmin(keyring) };
}

const code = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof KeysetError ? error.code : String(error)),
  );

describe('owners', () => {
  it('a key of an owner carries the owner (id, metadata, limits) when verified', async () => {
    const { keyring, keys, owners } = setup();
    const owner = await owners.create({ id: 'cus_42', metadata: { plan: 'pro' }, rateLimits: [{ name: 'minute', limit: 5, windowSeconds: 60 }] });
    expect(owner).toMatchObject({ id: 'cus_42', metadata: { plan: 'pro' }, disabledAt: null });
    const { key, record } = await keys.issue({ name: 'ci', scopes: ['a'], ownerId: 'cus_42' });
    expect(record.ownerId).toBe('cus_42');
    const verified = await keyring.verify(key);
    expect(verified.ownerId).toBe('cus_42');
    expect(verified.owner).toEqual({ id: 'cus_42', metadata: { plan: 'pro' }, rateLimits: [{ name: 'minute', limit: 5, windowSeconds: 60 }], quota: null });
    expect(JSON.parse(JSON.stringify(verified)).owner.metadata).toEqual({ plan: 'pro' });
  });

  it('refuses a key for an unknown owner, and a taken or malformed owner id', async () => {
    const { keys, owners } = setup();
    expect(await code(keys.issue({ name: 'ci', scopes: [], ownerId: 'nobody' }))).toBe('invalid_request');
    await owners.create({ id: 'a' });
    expect(await code(owners.create({ id: 'a' }))).toBe('invalid_request');
    expect(await code(owners.create({ id: 'a{b}' }))).toBe('invalid_request');
    expect(await code(owners.get('a{b}'))).toBe('not_found');
    expect(await code(owners.get('zz'))).toBe('not_found');
    expect(await code(owners.create({ id: 'b', rateLimits: [{ limit: 0, windowSeconds: 1 }] }))).toBe('invalid_request');
    expect(await code(keys.issue({ name: 'x', scopes: [], rateLimits: [{ name: 'owner.x', limit: 1, windowSeconds: 1 }] }))).toBe('invalid_request');
  });

  it('disabling refuses every key of the owner at once (cached or not); enabling admits them again', async () => {
    const { keyring, keys, owners } = setup();
    await owners.create({ id: 'cus_1' });
    const a = await keys.issue({ name: 'a', scopes: [], ownerId: 'cus_1' });
    const b = await keys.issue({ name: 'b', scopes: [], ownerId: 'cus_1' });
    const other = await keys.issue({ name: 'c', scopes: [] });
    await keyring.verify(a.key); // cached
    await owners.update('cus_1', { disabled: true });
    expect(await code(keyring.verify(a.key))).toBe('invalid_api_key');
    expect(await code(keyring.verify(b.key))).toBe('invalid_api_key');
    expect(await code(keyring.verify(other.key))).toBe('ok');
    await owners.update('cus_1', { disabled: false });
    expect(await code(keyring.verify(a.key))).toBe('ok');
    // Updating metadata reaches cached keys too.
    await owners.update('cus_1', { metadata: { plan: 'free' } });
    expect((await keyring.verify(a.key)).owner?.metadata).toEqual({ plan: 'free' });
  });

  it('deleting an owner revokes its keys, and listKeys pages through an owner\'s keys only', async () => {
    const { keyring, keys, owners } = setup();
    await owners.create({ id: 'cus_1' });
    const issued = [];
    for (let i = 0; i < 5; i++) issued.push(await keys.issue({ name: `k${i}`, scopes: [], ownerId: 'cus_1' }));
    await keys.issue({ name: 'stranger', scopes: [] });
    const first = await owners.listKeys('cus_1', { mode: 'offset', limit: 3, offset: 0 });
    expect(first.total).toBe(5);
    expect(first.records.every((r) => r.ownerId === 'cus_1')).toBe(true);
    await keyring.verify(issued[0]!.key);
    await owners.delete('cus_1');
    for (const { key } of issued) expect(await code(keyring.verify(key))).toBe('invalid_api_key');
    expect((await keys.get(issued[1]!.record.id)).revokedAt).not.toBeNull();
    expect(await code(owners.get('cus_1'))).toBe('not_found');
    expect(await code(owners.delete('cus_1'))).toBe('not_found');
  });

  it('tells change listeners owner:<id> before update and delete resolve', async () => {
    const { keyring, owners } = setup();
    const events: string[] = [];
    keyring.onChange(async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`${event.type} ${event.id}`);
    });
    await owners.create({ id: 'o' });
    await owners.update('o', { disabled: true });
    expect(events).toEqual(['revoked owner:o']);
    await owners.delete('o');
    expect(events).toEqual(['revoked owner:o', 'revoked owner:o']);
  });

  it('lists owners newest first in pages', async () => {
    const { owners } = setup();
    for (let i = 0; i < 7; i++) await owners.create({ id: `o${i}` });
    const page = await owners.list({ mode: 'offset', limit: 5, offset: 0 });
    expect(page.total).toBe(7);
    expect(page.hasMore).toBe(true);
    // limit + 1 records when there is more, as Paginator.page() expects (KeyListResult).
    expect(page.records).toHaveLength(6);
  });

  it('keeps a quota shaped and checked as a key\'s: create, get, update (refill kept), remove; verified keys see it', async () => {
    const { keyring, keys, owners } = setup();
    const created = await owners.create({ id: 'cus_q', quota: { remaining: 1000, refill: { amount: 1000, interval: 'monthly' } } });
    expect(created.quota).toMatchObject({ remaining: 1000, refill: { amount: 1000, interval: 'monthly' } });
    expect(created.quota?.setAt).toBeInstanceOf(Date);
    expect(JSON.parse(JSON.stringify(created)).quota).toEqual({ remaining: 1000, refill: { amount: 1000, interval: 'monthly' }, setAt: created.quota?.setAt.toISOString() });
    expect((await owners.get('cus_q')).quota).toEqual(created.quota);
    const { key } = await keys.issue({ name: 'ci', scopes: [], ownerId: 'cus_q' });
    expect((await keyring.verify(key)).owner?.quota).toMatchObject({ remaining: 1000 });
    // `refill` left out keeps the refill; the new setAt is later than the old one.
    const updated = await owners.update('cus_q', { quota: { remaining: 5 } });
    expect(updated.quota).toMatchObject({ remaining: 5, refill: { amount: 1000, interval: 'monthly' } });
    expect(updated.quota!.setAt.getTime()).toBeGreaterThan(created.quota!.setAt.getTime());
    // Cached verifications see the change (the owner's keys are evicted).
    expect((await keyring.verify(key)).owner?.quota).toMatchObject({ remaining: 5 });
    expect((await owners.update('cus_q', { quota: null })).quota).toBeNull();
    expect((await keyring.verify(key)).owner?.quota).toBeNull();
    expect((await owners.list({ mode: 'offset', limit: 5, offset: 0 })).records[0]?.quota).toBeNull();
  });

  it('refuses a malformed owner quota with 400 naming the field, as for a key', async () => {
    const { owners } = setup();
    const field = (promise: Promise<unknown>): Promise<unknown> =>
      promise.then(
        () => 'ok',
        (error: unknown) => (error instanceof KeysetError ? `${error.code} ${String(error.extensions.field)}` : String(error)),
      );
    expect(await field(owners.create({ id: 'a', quota: { remaining: -1 } }))).toBe('invalid_request quota.remaining');
    expect(await field(owners.create({ id: 'a', quota: 5 as never }))).toBe('invalid_request quota');
    expect(await field(owners.create({ id: 'a', quota: { remaining: 1, refill: { amount: 0, interval: 'daily' } } }))).toBe('invalid_request quota.refill.amount');
    expect(await field(owners.create({ id: 'a', quota: { remaining: 1, refill: { amount: 1, interval: 'weekly' as never } } }))).toBe('invalid_request quota.refill.interval');
    await owners.create({ id: 'a' });
    expect(await field(owners.update('a', { quota: { remaining: 1e16 } }))).toBe('invalid_request quota.remaining');
    expect((await owners.get('a')).quota).toBeNull();
  });
});
