/**
 * Usage counts on the example itself: two example instances on one PostgreSQL database and
 * one Redis, flushing usage every 200 ms, one owner with three keys, a known mix of
 * requests over both instances. The one that is killed is a process of its own
 * (`src/main.ts`, configured by environment); the other runs in the test's process
 * (`createOrdersApi`, which main.ts calls): a second spawned process cost one more Node,
 * tsx and app start (seconds on a loaded machine) and checked nothing the first does not.
 * The two start side by side, as instances may: migrations, the seed and the admin key
 * are made under the startup lock.
 *
 * 1. The usage API's totals equal the requests sent, per outcome, for every key and for
 *    the owner (the two instances' flushes add up exactly).
 * 2. One instance is killed (SIGKILL): what it flushed before survives, and what it loses
 *    is at most what it was sent since its last flush (the requests sent after the test saw
 *    that flush land, then the kill).
 *
 * Every wait is for an event (the counts showing in the API), never a fixed sleep.
 * Skips without PostgreSQL and Redis.
 */
import { readFileSync, rmSync } from 'node:fs';
import { postgresUrl, redisUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, stop, type Instance } from './instances.ts';
import { call, createDatabase, dropDatabase, startApi, tempDir, type TestApi } from './helpers.ts';

const pgUrl = await postgresUrl();
const redisAt = await redisUrl();

type Requests = Record<'allowed' | 'rate_limited' | 'quota_exhausted' | 'insufficient_scope' | 'concurrency_limited' | 'unavailable' | 'would_refuse_rate_limited' | 'would_refuse_quota_exhausted' | 'would_refuse_concurrency_limited', number>;
interface Totals {
  requests: Requests;
  credits: number;
}


/** Resolves once `condition()` holds, checking every 25 ms (an event, never a budget). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 25));
}

const sum = (requests: Requests): number => Object.values(requests).reduce((a, b) => a + b, 0);
const totals = (r: Partial<Requests>, credits = 0): Totals => ({
  requests: { allowed: 0, rate_limited: 0, quota_exhausted: 0, insufficient_scope: 0, concurrency_limited: 0, unavailable: 0, would_refuse_rate_limited: 0, would_refuse_quota_exhausted: 0, would_refuse_concurrency_limited: 0, ...r },
  credits,
});

describe.skipIf(pgUrl === undefined || redisAt === undefined)('usage counted by two example instances (PostgreSQL + Redis)', () => {
  const run = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const database = `orders_api_usage_${run}`;
  const dataDir = tempDir('orders-api-usage-');
  const instances: Instance[] = [];
  let inProcess: TestApi | undefined;
  let admin: string;
  let from: string;

  beforeAll(async () => {
    const databaseUrl = await createDatabase(pgUrl!, database);
    from = new Date(Date.now() - 60_000).toISOString();
    // Side by side; whichever takes the startup lock first migrates, seeds and creates the admin key.
    const [started, spawned] = await Promise.allSettled([
      startApi({ adapter: 'hono', dataDir, databaseUrl, redisUrl: redisAt!, seedOrders: 50, cursorSecrets: ['c'.repeat(32)], usageFlushMs: 200 }),
      startInstance({
        ADAPTER: 'fastify',
        PORT: '0',
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisAt!,
        SEED_ORDERS: '50',
        CURSOR_SECRETS: 'c'.repeat(32),
        USAGE_FLUSH_MS: '200',
        LOG_LEVEL: 'info',
      }),
    ]);
    // Kept whichever started, so afterAll stops it when the other failed.
    if (started.status === 'fulfilled') inProcess = started.value;
    if (spawned.status === 'fulfilled') instances.push(spawned.value);
    if (started.status === 'rejected') throw started.reason;
    if (spawned.status === 'rejected') throw spawned.reason;
    admin = readFileSync(`${dataDir}/admin.key`, 'utf8').trim();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stop(instance, 'SIGKILL')));
    await inProcess?.stop();
    await dropDatabase(pgUrl!, database);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const usageOf = async (path: string): Promise<Totals> => {
    const res = await call(inProcess!.api.url, `${path}?interval=minute&from=${from}`, { key: admin });
    expect(res.status, res.text).toBe(200);
    return (res.body as { totals: Totals }).totals;
  };

  it('the totals equal the requests sent, per outcome, for every key and the owner; a SIGKILL loses at most what was sent since the last flush', async () => {
    const a = { url: inProcess!.api.url };
    const b = instances[0]!;
    const urls = [a.url, b.url];
    const ownerId = `cus_${run}`;
    expect((await call(a.url, '/api/owners', { key: admin, method: 'POST', body: { id: ownerId } })).status).toBe(201);
    const issue = async (body: Record<string, unknown>) => {
      const res = await call(a.url, '/api/keys', { key: admin, method: 'POST', body: { ownerId, ...body } });
      expect(res.status, res.text).toBe(201);
      return res.body as { id: string; key: string };
    };
    // limited: 3 reports an hour; reader: orders only; metered: 10 credits, a report costs 5.
    const limited = await issue({ name: 'limited', scopes: ['reports:read'], rateLimit: { limit: 3, windowSeconds: 3600 } });
    const reader = await issue({ name: 'reader', scopes: ['orders:read'] });
    const metered = await issue({ name: 'metered', scopes: ['reports:read'], quota: { remaining: 10 } });

    // Sent one after the other, alternating instances (the limits are shared through Redis).
    const plan: [{ key: string }, string, number][] = [
      ...Array.from({ length: 5 }, (_, i): [{ key: string }, string, number] => [limited, '/api/reports/daily', i < 3 ? 200 : 429]),
      [reader, '/api/orders?limit=1', 200],
      [reader, '/api/orders?limit=1', 200],
      ...Array.from({ length: 3 }, (): [{ key: string }, string, number] => [reader, '/api/reports/daily', 403]),
      ...Array.from({ length: 3 }, (_, i): [{ key: string }, string, number] => [metered, '/api/reports/daily', i < 2 ? 200 : 429]),
    ];
    for (const [i, [key, path, status]] of plan.entries()) {
      const res = await call(urls[i % 2]!, path, { key: key.key });
      expect(res.status, `${i} ${path}: ${res.text}`).toBe(status);
    }
    const expected = {
      [limited.id]: totals({ allowed: 3, rate_limited: 2 }),
      [reader.id]: totals({ allowed: 2, insufficient_scope: 3 }),
      [metered.id]: totals({ allowed: 2, quota_exhausted: 1 }, 10),
    };
    const ownerExpected = totals({ allowed: 7, rate_limited: 2, insufficient_scope: 3, quota_exhausted: 1 }, 10);

    // Wait for both instances' flushes to land, then the counts must be exact.
    await until(async () => sum((await usageOf(`/api/owners/${ownerId}/usage`)).requests) >= plan.length);
    expect(await usageOf(`/api/owners/${ownerId}/usage`)).toEqual(ownerExpected);
    for (const [id, keyTotals] of Object.entries(expected)) expect(await usageOf(`/api/keys/${id}/usage`)).toEqual(keyTotals);

    // The kill. 20 more requests to b; once they show, b has flushed them (not on shutdown: it runs on).
    const allowedOfReader = async () => (await usageOf(`/api/keys/${reader.id}/usage`)).requests.allowed;
    for (let i = 0; i < 20; i++) expect((await call(b.url, '/api/orders?limit=1', { key: reader.key })).status).toBe(200);
    await until(async () => (await allowedOfReader()) >= 22);
    expect(await allowedOfReader()).toBe(22);
    // 5 more, then SIGKILL at once: these are all b may lose (sent after its last flush we saw).
    const unflushed = 5;
    await Promise.all(Array.from({ length: unflushed }, async () => expect((await call(b.url, '/api/orders?limit=1', { key: reader.key })).status).toBe(200)));
    await stop(b, 'SIGKILL');
    // a counts on; once its 4 show, b (dead) can add nothing more: the count is final.
    for (let i = 0; i < 4; i++) expect((await call(a.url, '/api/orders?limit=1', { key: reader.key })).status).toBe(200);
    await until(async () => (await allowedOfReader()) >= 26);
    const counted = await allowedOfReader();
    const lost = 22 + unflushed + 4 - counted;
    expect(lost).toBeGreaterThanOrEqual(0);
    expect(lost).toBeLessThanOrEqual(unflushed);
    // Nothing else moved: the other outcomes and keys are as they were.
    expect((await usageOf(`/api/keys/${reader.id}/usage`)).requests).toMatchObject({ insufficient_scope: 3, rate_limited: 0 });
    expect(await usageOf(`/api/keys/${metered.id}/usage`)).toEqual(expected[metered.id]);
  }, 120_000);
});
