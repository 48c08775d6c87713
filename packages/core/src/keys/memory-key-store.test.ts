import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { StoredIdentity, StoredSecret } from './key-store.ts';
import { createMemoryKeyStore } from './memory-key-store.ts';

const t = (ms: number): Date => new Date(Date.UTC(2025, 0, 1) + ms);

function identity(id: string, createdMs: number): StoredIdentity {
  return { id, name: id, scopes: ['a'], rateLimit: null, prefix: 'acme_test', metadata: {}, ipAllowlist: null, createdAt: t(createdMs), expiresAt: null, revokedAt: null };
}
function secret(digest: string, createdMs = 0, expiresAt: Date | null = null): StoredSecret {
  return { digest, last4: digest.slice(-4), createdAt: t(createdMs), lastUsedAt: null, expiresAt };
}

describe('createMemoryKeyStore', () => {
  it('finds by digest and returns copies that cannot change the store', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('d1'));
    const found = await store.findByDigest('d1');
    expect(found?.identity.id).toBe('k1');
    found!.identity.scopes.push('admin');
    found!.secret.expiresAt = t(1);
    const again = await store.findByDigest('d1');
    expect(again?.identity.scopes).toEqual(['a']);
    expect(again?.secret.expiresAt).toBeNull();
    expect(await store.findByDigest('nope')).toBeUndefined();
  });

  it('refuses duplicate ids and digests', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('d1'));
    await expect(store.insertIdentity(identity('k1', 0), secret('d2'))).rejects.toThrow();
    await expect(store.insertIdentity(identity('k2', 0), secret('d1'))).rejects.toThrow();
    await expect(store.addSecret('k1', secret('d1'), t(5))).rejects.toThrow();
  });

  it('rotation adds the secret first, ends the current one at min(own expiry, given time), older ones now', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('d1'));
    expect(await store.addSecret('k1', secret('d2', 10), t(100))).toBe(true);
    expect(await store.addSecret('k1', secret('d3', 20), t(500))).toBe(true);
    let key = await store.getIdentity('k1');
    expect(key?.secrets.map((s) => [s.digest, s.expiresAt?.getTime() ?? null])).toEqual([
      ['d3', null],
      ['d2', t(500).getTime()],
      ['d1', t(20).getTime()], // older than the current secret: ends at the rotation (d3's createdAt)
    ]);
    expect(await store.addSecret('k1', secret('d4', 30), t(1000))).toBe(true);
    key = await store.getIdentity('k1');
    expect(key?.secrets.map((s) => [s.digest, s.expiresAt?.getTime() ?? null])).toEqual([
      ['d4', null],
      ['d3', t(1000).getTime()],
      ['d2', t(30).getTime()],
      ['d1', t(20).getTime()], // its earlier end is kept
    ]);
    expect(await store.addSecret('missing', secret('d9'), t(1))).toBe(false);
  });

  it('revocation sets revokedAt once, ends every secret, and blocks rotation', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('d1', 0, t(50)));
    await store.addSecret('k1', secret('d2', 1), t(1000));
    expect(await store.revoke('k1', t(200))).toBe(true);
    expect(await store.revoke('k1', t(300))).toBe(true);
    const key = await store.getIdentity('k1');
    expect(key?.identity.revokedAt).toEqual(t(200));
    expect(key?.secrets.map((s) => s.expiresAt)).toEqual([t(200), t(50)]);
    expect(await store.addSecret('k1', secret('d3'), t(1))).toBe(false);
    expect(await store.revoke('nope', t(1))).toBe(false);
  });

  it('touchLastUsed never moves a time backwards (GREATEST) and ignores unknown digests', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('d1'));
    await store.touchLastUsed([{ digest: 'd1', at: t(100) }, { digest: 'zz', at: t(100) }]);
    await store.touchLastUsed([{ digest: 'd1', at: t(50) }]);
    expect((await store.findByDigest('d1'))?.secret.lastUsedAt).toEqual(t(100));
    await store.touchLastUsed([{ digest: 'd1', at: t(150) }]);
    expect((await store.findByDigest('d1'))?.secret.lastUsedAt).toEqual(t(150));
  });

  it('lists newest first with id DESC as tie-breaker, by cursor or offset', async () => {
    const store = createMemoryKeyStore();
    const rows: [string, number][] = [['a', 1], ['b', 2], ['c', 2], ['d', 2], ['e', 3], ['f', 0]];
    for (const [id, ms] of rows) await store.insertIdentity(identity(id, ms), secret(`d-${id}`));
    const ids = async (q: Parameters<typeof store.listIdentities>[0]) => (await store.listIdentities(q)).keys.map((k) => k.identity.id);
    expect(await ids({ take: 10 })).toEqual(['e', 'd', 'c', 'b', 'a', 'f']);
    expect(await ids({ take: 2, after: { createdAt: t(2), id: 'd' } })).toEqual(['c', 'b']);
    expect(await ids({ take: 10, after: { createdAt: t(2), id: 'b' } })).toEqual(['a', 'f']);
    expect(await ids({ take: 2, offset: 3 })).toEqual(['b', 'a']);
    expect(await store.listIdentities({ take: 1, offset: 0, withTotal: true })).toMatchObject({ total: 6 });
    expect(await store.listIdentities({ take: 1 })).not.toHaveProperty('total');
  });

  it('prints secrets without their digest', async () => {
    const store = createMemoryKeyStore();
    await store.insertIdentity(identity('k1', 0), secret('0123456789abcdef-digest'));
    const found = await store.findByDigest('0123456789abcdef-digest');
    expect(inspect(found)).not.toContain('0123456789abcdef');
    expect(JSON.stringify(found)).not.toContain('0123456789abcdef');
    expect(found?.secret.digest).toBe('0123456789abcdef-digest');
  });
});
