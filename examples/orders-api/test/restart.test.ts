/**
 * A restart on the same DATA_DIR: no second seed, no second admin key, cursors
 * issued before the restart still work (the generated cursor secret is persisted),
 * and the graceful close flushed `lastUsedAt`.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { call, startApi, tempDir } from './helpers.ts';

describe('restart on the same DATA_DIR', () => {
  const dataDir = tempDir('orders-restart-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps orders, keys and cursors, and flushes last use on close', async () => {
    const first = await startApi({ dataDir, seedOrders: 300 });
    const admin = first.api.adminKey!;
    const issued = await call(first.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'r', scopes: ['orders:read'] } });
    const reader: string = issued.body.key;
    const page1 = await call(first.api.url, '/api/orders?limit=50', { key: reader });
    const page2 = await call(first.api.url, `/api/orders?limit=50&cursor=${page1.body.nextCursor}`, { key: reader });
    // lastUsedAt is written at most once a minute: only the graceful close persists it now.
    await first.stop();

    const second = await startApi({ dataDir, seedOrders: 5000 });
    try {
      expect(second.api.adminKey).toBe(admin);
      expect(second.logs.some((l) => l.includes('created an admin key') || l.includes('seeded orders'))).toBe(false);
      const { rows } = await second.api.db.query<{ n: string }>('SELECT count(*)::text AS n FROM orders');
      expect(rows[0]!.n).toBe('300');
      const again = await call(second.api.url, `/api/orders?limit=50&cursor=${page1.body.nextCursor}`, { key: reader });
      expect(again.status).toBe(200);
      expect(again.body.items).toEqual(page2.body.items);
      const record = await call(second.api.url, `/api/keys/${issued.body.id}`, { key: admin });
      expect(record.body.lastUsedAt).toEqual(expect.any(String));
    } finally {
      await second.stop();
    }
  }, 60_000);
});
