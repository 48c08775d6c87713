/**
 * REDIS_URL: four instances (one per adapter) on one PostgreSQL database share rate
 * limits and revocations through Redis. Skips when PostgreSQL or Redis does not answer.
 */
import { postgresUrl, redisUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.ts';
import { ADAPTERS } from '../src/config.ts';
import { call, createDatabase, dropDatabase, startApi, type TestApi } from './helpers.ts';

const pgUrl = await postgresUrl();
const redis = await redisUrl();

describe.skipIf(pgUrl === undefined || redis === undefined)('one instance per adapter with REDIS_URL', () => {
  const database = `orders_api_redis_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let databaseUrl: string;
  let instances: TestApi[] = [];
  let a: TestApi;
  let admin: string;

  const issue = async (body: Record<string, unknown>) => {
    const res = await call(a.api.url, '/api/keys', { key: admin, method: 'POST', body });
    expect(res.status, res.text).toBe(201);
    return res.body as { key: string; id: string };
  };

  beforeAll(async () => {
    databaseUrl = await createDatabase(pgUrl!, database);
    const common = { databaseUrl, redisUrl: redis!, seedOrders: 50, cursorSecrets: ['x'.repeat(32)] };
    // One after the other: the first creates the schema and the admin key.
    for (const adapter of ADAPTERS) instances.push(await startApi({ ...common, adapter }));
    a = instances[0]!;
    admin = a.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map((t) => t.stop({ remove: true })));
    await dropDatabase(pgUrl!, database);
  });

  it('shares one per-key rate limit between instances', async () => {
    const { key } = await issue({ name: 'shared-limit', scopes: ['orders:read'], rateLimit: { limit: 4, windowSeconds: 60 } });
    const statuses = [];
    for (const t of [...instances, ...instances]) statuses.push((await call(t.api.url, '/api/orders?limit=1', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
  });

  it('revokes on every instance at once, also from the CLI', async () => {
    const first = await issue({ name: 'revoke-http', scopes: ['orders:read'] });
    // Cached as valid on every instance first; the bus must evict it everywhere when A revokes.
    for (const t of instances) expect((await call(t.api.url, '/api/orders?limit=1', { key: first.key })).status).toBe(200);
    expect((await call(a.api.url, `/api/keys/${first.id}`, { key: admin, method: 'DELETE' })).status).toBe(204);
    for (const t of instances) expect((await call(t.api.url, '/api/orders?limit=1', { key: first.key })).status, t.api.config.adapter).toBe(401);

    const second = await issue({ name: 'revoke-cli', scopes: ['orders:read'] });
    for (const t of instances) expect((await call(t.api.url, '/api/orders?limit=1', { key: second.key })).status).toBe(200);
    const err: string[] = [];
    const code = await runCli(['revoke', second.id], {
      env: { DATABASE_URL: databaseUrl, REDIS_URL: redis!, DATA_DIR: a.dataDir, LOG_LEVEL: 'silent' },
      out: () => {},
      err: (s) => err.push(s),
    });
    expect(code, err.join('')).toBe(0);
    for (const t of instances) expect((await call(t.api.url, '/api/orders?limit=1', { key: second.key })).status, t.api.config.adapter).toBe(401);
  });

  it('refuses to start with an unreachable REDIS_URL, naming the variable', async () => {
    await expect(
      startApi({ databaseUrl, redisUrl: 'redis://127.0.0.1:1', seedOrders: 0, cursorSecrets: ['x'.repeat(32)] }),
    ).rejects.toThrow(/REDIS_URL/);
  });
});
