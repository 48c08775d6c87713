/**
 * Usage counted once when PostgreSQL freezes, end to end: four example instances, one per
 * adapter (Hono, Express, Fastify, Fetch), on a PostgreSQL of the test's own, flushing usage every 200 ms, the database
 * stopped with SIGSTOP (every process of it) twice under traffic, each time long enough for
 * flushes to time out on the client while their statements wait in the server's sockets,
 * then thawed. Requests of cached keys are decided (and counted) before the database is
 * needed, so each is answered: 200, or 503 when the orders query times out. After the
 * instances shut down, the usage the store holds for the key and its owner equals the
 * answers the clients saw, per outcome. Skips without initdb.
 */
import { createPostgresUsageStore } from '@keyset/postgres';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, startApi, type TestApi } from './helpers.ts';

const available = ownPostgresAvailable();

describe.skipIf(!available)('usage when PostgreSQL freezes (an instance per adapter, own server)', () => {
  let server: OwnPostgres;
  const apis: TestApi[] = [];
  let admin: pg.Pool;

  beforeAll(async () => {
    server = await startOwnPostgres();
    for (const adapter of ADAPTERS) {
      // A short query timeout: frozen requests answer 503 quickly, flushes time out quickly.
      apis.push(await startApi({ adapter, databaseUrl: server.url, seedOrders: 50, usageFlushMs: 200, databaseQueryTimeoutMs: 1_000, logLevel: 'silent' }));
    }
    admin = new pg.Pool({ connectionString: server.url, max: 1 });
  }, 120_000);

  afterAll(async () => {
    server?.thaw();
    for (const t of apis) await t.stop({ remove: true }).catch(() => undefined);
    await admin?.end().catch(() => undefined);
    await server?.stop();
  });

  async function whenIdle(): Promise<void> {
    for (;;) {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname IS NOT NULL AND pid <> pg_backend_pid() AND state = 'active'`);
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('the stored requests equal the answers, per outcome, for the key and its owner: none counted twice', async () => {
    const [first] = apis;
    const adminKey = first!.api.adminKey!;
    const owner = `cus_frozen_${Math.random().toString(36).slice(2, 8)}`;
    expect((await call(first!.api.url, '/api/owners', { key: adminKey, method: 'POST', body: { id: owner } })).status).toBe(201);
    const issued = await call(first!.api.url, '/api/keys', { key: adminKey, method: 'POST', body: { name: 'frozen', scopes: ['orders:read'], ownerId: owner } });
    expect(issued.status).toBe(201);
    const { id, key } = issued.body as { id: string; key: string };
    const answers = new Map<number, number>();
    let n = 0;
    /** `count` requests, four at a time, one to each instance; tallies the answers. */
    const traffic = async (count: number): Promise<void> => {
      for (let sent = 0; sent < count; sent += 4) {
        const replies = await Promise.all(Array.from({ length: 4 }, () => call(apis[n++ % apis.length]!.api.url, '/api/orders?limit=5', { key })));
        for (const reply of replies) answers.set(reply.status, (answers.get(reply.status) ?? 0) + 1);
      }
    };
    for (let round = 0; round < 2; round++) {
      // Both instances hold the key in their verification cache: frozen requests reach the limiter.
      await traffic(20);
      server.freeze();
      try {
        await traffic(20);
        // The flushes that started during the freeze have timed out on the client by now.
        await new Promise((resolve) => setTimeout(resolve, 1_600));
      } finally {
        server.thaw();
      }
      await whenIdle();
      await traffic(20);
    }
    for (const t of apis) await t.api.close();
    await whenIdle();
    expect(answers.get(503) ?? 0).toBeGreaterThan(0);
    expect([...answers.keys()].every((status) => status === 200 || status === 503)).toBe(true);
    const answered = [...answers.values()].reduce((a, b) => a + b, 0);
    const store = createPostgresUsageStore({ client: admin });
    const to = Date.now() + 60_000;
    for (const subject of [{ keyId: id }, { ownerId: owner }]) {
      const buckets = await store.read({ ...subject, from: to - 2 * 86_400_000, to, interval: 'day' });
      const stored = buckets.reduce((sum, b) => sum + Object.values(b.requests).reduce((a, c) => a + c, 0), 0);
      expect(stored, JSON.stringify(subject)).toBe(answered);
      // Every request was admitted by the limiter (the 503s failed later, on the orders query).
      expect(buckets.reduce((sum, b) => sum + b.requests.allowed, 0)).toBe(answered);
    }
  }, 120_000);
});
