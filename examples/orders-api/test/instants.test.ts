/**
 * Instants out of range: an RFC 3339 `from`, `to` or `expiresAt` whose UTC instant falls
 * before 0001-01-01T00:00:00Z or after 9999-12-31T23:59:59.999Z (an offset can push a
 * well-formed year 0001 or 9999 there) is a 400 naming the parameter on every route that
 * takes one, on all four adapters, on PGlite and on PostgreSQL, where the database used to
 * refuse the value and the client got 503. The ends of the range themselves are answered.
 * PostgreSQL: TEST_DATABASE_URL (skips when nothing answers).
 */
import { postgresUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, createDatabase, dropDatabase, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const pgUrl = await postgresUrl();

/** Just outside the range, by an offset, by the year, and by a millisecond. */
const OUTSIDE = ['0001-01-01T00:00:00+23:59', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01', '0000-06-15T00:00:00Z', '10000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z'];

describe.each([['PGlite'], ...(pgUrl === undefined ? [] : [['PostgreSQL']])])('instants on %s', (backend) => {
  const database = `orders_api_instants_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let t: TestApi;
  let admin: string;
  let keyId: string;
  const origins: string[] = [];
  const extra: ExtraServer[] = [];

  beforeAll(async () => {
    const databaseUrl = backend === 'PostgreSQL' ? await createDatabase(pgUrl!, database) : undefined;
    t = await startApi({ adapter: 'hono', seedOrders: 20, rateLimit: { limit: 1_000_000, windowSeconds: 1 }, ...(databaseUrl === undefined ? {} : { databaseUrl, cursorSecrets: ['x'.repeat(32)] }) });
    admin = t.api.adminKey!;
    origins.push(t.api.url);
    for (const adapter of ADAPTERS.filter((a) => a !== 'hono')) {
      const server = await serveAlso(t, adapter);
      extra.push(server);
      origins.push(server.url);
    }
    const owner = await call(t.api.url, '/api/owners', { key: admin, method: 'POST', body: { id: 'cus_instants' } });
    expect(owner.status, owner.text).toBe(201);
    const key = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'instants', scopes: ['orders:read'], ownerId: 'cus_instants' } });
    expect(key.status, key.text).toBe(201);
    keyId = key.body.id;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(extra.map((server) => server.close()));
    await t?.stop({ remove: true });
    if (backend === 'PostgreSQL') await dropDatabase(pgUrl!, database);
  });

  /** Every query that takes an instant, with `at` as its `name` parameter. */
  const queries = (name: 'from' | 'to', at: string): string[] => {
    const instant = `${name}=${encodeURIComponent(at)}`;
    return [
      `/api/audit?${instant}`,
      `/api/audit?${instant}&offset=0`,
      `/api/usage/top?${instant}`,
      `/api/keys/${keyId}/usage?${instant}`,
      '/api/owners/cus_instants/usage?' + instant,
    ];
  };

  it('answers 400 naming the parameter for an instant outside the range, on every route and adapter', async () => {
    for (const origin of origins) {
      for (const at of OUTSIDE) {
        for (const name of ['from', 'to'] as const) {
          for (const path of queries(name, at)) {
            const reply = await call(origin, path, { key: admin });
            expect([reply.status, reply.body?.code, reply.body?.field], `${origin}${path}\n${reply.text}`).toEqual([400, 'invalid_request', name]);
          }
        }
        const issued = await call(origin, '/api/keys', { key: admin, method: 'POST', body: { name: 'late', scopes: ['orders:read'], expiresAt: at } });
        expect([issued.status, issued.body?.code, issued.body?.field], `${origin} expiresAt ${at}\n${issued.text}`).toEqual([400, 'invalid_request', 'expiresAt']);
      }
    }
  });

  it('answers the ends of the range themselves', async () => {
    for (const origin of origins) {
      for (const path of [
        '/api/audit?from=0001-01-01T00:00:00Z',
        '/api/audit?from=0001-01-01T23:59:00%2B23:59&offset=0',
        '/api/audit?to=9999-12-31T23:59:59.999Z',
        '/api/audit?to=9999-12-31T00:00:59.999-23:59&offset=0',
        '/api/usage/top?from=0001-01-01T00:00:00Z&to=0001-01-01T01:00:00Z',
        `/api/keys/${keyId}/usage?from=9999-12-31T23:00:00Z&to=9999-12-31T23:59:59.999Z`,
        '/api/owners/cus_instants/usage?from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z',
      ]) {
        const reply = await call(origin, path, { key: admin });
        expect(reply.status, `${origin}${path}\n${reply.text}`).toBe(200);
      }
      const issued = await call(origin, '/api/keys', { key: admin, method: 'POST', body: { name: 'last', scopes: ['orders:read'], expiresAt: '9999-12-31T23:59:59.999Z' } });
      expect(issued.status, issued.text).toBe(201);
      expect(issued.body.expiresAt).toBe('9999-12-31T23:59:59.999Z');
    }
  });
});
