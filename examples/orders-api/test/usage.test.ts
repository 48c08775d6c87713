/**
 * The usage routes on every adapter, over the embedded PGlite: counts per outcome as the
 * requests were sent, dense buckets, 400 problems naming the parameter for every bad
 * query, 404 for an unknown key or owner; a query without `from` answered at every
 * interval (its default range fits the route's cap); a concurrency refusal counted as
 * `concurrency_limited`; the counts a graceful shutdown flushes; and `keys usage <id>`
 * reading them back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { runCli } from '../src/cli.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const HOUR = 3_600_000;
const IN_FLIGHT_MAX = 2;

describe('usage routes (PGlite, every adapter)', () => {
  let t: TestApi;
  let admin: string;
  /** Each adapter's URL: the API's own server for its adapter, one more server for each other. */
  const servers: Partial<Record<(typeof ADAPTERS)[number], { url: string }>> = {};
  const extras: ExtraServer[] = [];
  let key: { id: string; key: string };
  let owner: string;

  beforeAll(async () => {
    // An in-flight cap of 2 per key: the test holds both leases of one key to be refused for it.
    t = await startApi({ seedOrders: 20, usageFlushMs: 3_600_000, logLevel: 'silent', inFlightMax: IN_FLIGHT_MAX });
    admin = t.api.adminKey!;
    servers[t.api.config.adapter] = { url: t.api.url };
    const others = ADAPTERS.filter((adapter) => adapter !== t.api.config.adapter);
    extras.push(...(await Promise.all(others.map((adapter) => serveAlso(t, adapter)))));
    others.forEach((adapter, i) => (servers[adapter] = extras[i]!));
    owner = `cust_${Math.random().toString(36).slice(2, 8)}`;
    expect((await call(t.api.url, '/api/owners', { key: admin, method: 'POST', body: { id: owner } })).status).toBe(201);
    const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read'], ownerId: owner, quota: { remaining: 2 } } });
    expect(issued.status, issued.text).toBe(201);
    key = issued.body as { id: string; key: string };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(extras.map((s) => s.close()));
    await t?.stop({ remove: true });
  });

  it('counts each request by outcome, per key and per owner, with the credits spent', async () => {
    const statuses: number[] = [];
    // Quota of 2: two admitted (1 credit each), the third quota_exhausted; reports: insufficient_scope.
    for (let i = 0; i < 3; i++) statuses.push((await call(t.api.url, '/api/orders?limit=1', { key: key.key })).status);
    statuses.push((await call(t.api.url, '/api/reports/daily', { key: key.key })).status);
    expect(statuses).toEqual([200, 200, 429, 403]);
    await t.api.keys.usage.counter.flush();
    for (const adapter of ADAPTERS) {
      const base = servers[adapter]!.url;
      const res = await call(base, `/api/keys/${key.id}/usage?interval=minute&from=${new Date(Date.now() - 10 * 60_000).toISOString()}`, { key: admin });
      expect(res.status, `${adapter}: ${res.text}`).toBe(200);
      const body = res.body as { keyId: string; interval: string; buckets: { start: string }[]; totals: unknown };
      expect(body.keyId).toBe(key.id);
      expect(body.totals).toEqual({ requests: { allowed: 2, rate_limited: 0, quota_exhausted: 1, insufficient_scope: 1, concurrency_limited: 0, unavailable: 0, would_refuse_rate_limited: 0, would_refuse_quota_exhausted: 0, would_refuse_concurrency_limited: 0 }, credits: 2 });
      // Dense: one bucket per minute from the aligned start, oldest first.
      expect(body.buckets.length).toBeGreaterThanOrEqual(10);
      const starts = body.buckets.map((b) => Date.parse(b.start));
      starts.slice(1).forEach((s, i) => expect(s - starts[i]!).toBe(60_000));
      const ownerUsage = await call(base, `/api/owners/${owner}/usage`, { key: admin });
      expect(ownerUsage.status).toBe(200);
      expect(ownerUsage.body).toMatchObject({ ownerId: owner, interval: 'hour', totals: body.totals });
      expect((ownerUsage.body as { buckets: unknown[] }).buckets).toHaveLength(24);
      const top = await call(base, '/api/usage/top?by=refusals&limit=5', { key: admin });
      expect(top.status).toBe(200);
      expect((top.body as { by: string; items: { keyId: string }[] }).items).toContainEqual({ keyId: key.id, requests: 4, refusals: 2, credits: 2 });
    }
  });

  it('refuses every bad query with a 400 problem naming the parameter, and an unknown key or owner with 404', async () => {
    const now = Date.now();
    const bad: [string, string][] = [
      [`/api/keys/${key.id}/usage?from=yesterday`, 'from'],
      [`/api/keys/${key.id}/usage?to=2025-01-01`, 'to'],
      [`/api/keys/${key.id}/usage?interval=week`, 'interval'],
      [`/api/keys/${key.id}/usage?interval=hour&interval=day`, 'interval'],
      [`/api/keys/${key.id}/usage?from=${new Date(now).toISOString()}&to=${new Date(now - HOUR).toISOString()}`, 'from'],
      [`/api/keys/${key.id}/usage?interval=minute&from=${new Date(now - 25 * HOUR).toISOString()}`, 'from'],
      [`/api/owners/${owner}/usage?interval=hour&from=${new Date(now - 32 * 24 * HOUR).toISOString()}`, 'from'],
      ['/api/usage/top?limit=0', 'limit'],
      ['/api/usage/top?limit=101', 'limit'],
      ['/api/usage/top?limit=1e1', 'limit'],
      ['/api/usage/top?by=credits', 'by'],
    ];
    for (const adapter of ADAPTERS) {
      const base = servers[adapter]!.url;
      for (const [path, field] of bad) {
        const res = await call(base, path, { key: admin });
        expect(res.status, `${adapter} ${path}: ${res.text}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ code: 'invalid_request', field });
      }
      expect((await call(base, '/api/keys/key_doesnotexist000000000/usage', { key: admin })).body).toMatchObject({ status: 404, code: 'not_found' });
      expect((await call(base, '/api/owners/nobody_here/usage', { key: admin })).body).toMatchObject({ status: 404, code: 'not_found' });
      // A key without keys:admin may not read usage.
      expect((await call(base, `/api/keys/${key.id}/usage`, { key: key.key })).status).toBe(403);
    }
  });

  it('a query without `from` is answered at every interval, for a key and an owner: the last 60 minutes, 24 hours or 30 days', async () => {
    for (const adapter of ADAPTERS) {
      const base = servers[adapter]!.url;
      for (const [interval, count] of [['minute', 60], ['hour', 24], ['day', 30]] as const) {
        for (const path of [`/api/keys/${key.id}/usage?interval=${interval}`, `/api/owners/${owner}/usage?interval=${interval}`, `/api/usage/top?interval=${interval}`]) {
          const res = await call(base, path, { key: admin });
          expect(res.status, `${adapter} ${path}: ${res.text}`).toBe(200);
          const body = res.body as { from: string; to: string; buckets?: { start: string }[] };
          if (body.buckets === undefined) continue;
          expect(body.buckets, `${adapter} ${path}`).toHaveLength(count);
          // The newest bucket is the one in progress.
          expect(Date.parse(body.buckets.at(-1)!.start)).toBeLessThan(Date.parse(body.to));
        }
      }
    }
  });

  it('counts a request refused by the in-flight cap as `concurrency_limited`, on every adapter', async () => {
    const issued = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'busy', scopes: ['orders:read'] } });
    expect(issued.status, issued.text).toBe(201);
    const busy = issued.body as { id: string; key: string };
    // Two requests of the key at work: the guard's leases, held as a slow handler would hold them.
    const held = await Promise.all(
      Array.from({ length: IN_FLIGHT_MAX }, () => t.api.keys.guard.check({ authorization: `ApiKey ${busy.key}`, url: '/api/orders', remoteAddress: '127.0.0.1' })),
    );
    try {
      for (const adapter of ADAPTERS) {
        const res = await call(servers[adapter]!.url, '/api/orders?limit=1', { key: busy.key });
        expect(res.status, `${adapter}: ${res.text}`).toBe(429);
        expect(res.body).toMatchObject({ code: 'concurrency_limited', max_in_flight: IN_FLIGHT_MAX });
      }
    } finally {
      for (const lease of held) lease.release?.();
    }
    expect((await call(t.api.url, '/api/orders?limit=1', { key: busy.key })).status).toBe(200);
    await t.api.keys.usage.counter.flush();
    const expected = { allowed: IN_FLIGHT_MAX + 1, rate_limited: 0, quota_exhausted: 0, insufficient_scope: 0, concurrency_limited: ADAPTERS.length, unavailable: 0, would_refuse_rate_limited: 0, would_refuse_quota_exhausted: 0, would_refuse_concurrency_limited: 0 };
    for (const adapter of ADAPTERS) {
      const res = await call(servers[adapter]!.url, `/api/keys/${busy.id}/usage?interval=minute`, { key: admin });
      expect(res.status, `${adapter}: ${res.text}`).toBe(200);
      expect((res.body as { totals: unknown }).totals, adapter).toEqual({ requests: expected, credits: 0 });
      const top = await call(servers[adapter]!.url, '/api/usage/top?by=refusals&interval=minute', { key: admin });
      expect((top.body as { items: unknown[] }).items, adapter).toContainEqual({ keyId: busy.id, requests: IN_FLIGHT_MAX + 1 + ADAPTERS.length, refusals: ADAPTERS.length, credits: 0 });
    }
  });

  it('a graceful shutdown writes what was counted since the last flush; `keys usage <id>` reads it back', async () => {
    for (let i = 0; i < 3; i++) await call(t.api.url, '/api/reports/daily', { key: key.key });
    // 1 + 4 (one per adapter, the test above) + these 3, the last 3 never flushed before the stop.
    await t.stop();
    let out = '';
    let err = '';
    const env = { DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
    const code = await runCli(['usage', key.id, '--interval', 'minute', '--from', new Date(Date.now() - 30 * 60_000).toISOString(), '--json'], { env, out: (s) => void (out += s), err: (s) => void (err += s) });
    expect(code, err).toBe(0);
    expect(JSON.parse(out).totals.requests).toMatchObject({ allowed: 2, quota_exhausted: 1, insufficient_scope: 8 });
    const human = await runCli(['usage', key.id], { env, out: (s) => void (out = s), err: (s) => void (err += s) });
    expect(human).toBe(0);
    expect(out).toMatch(/^Usage of key \S+ from .* per hour/);
    expect(out).toMatch(/\nTOTAL\s+2\s+0\s+1\s+8\s+0\s+0\s+0\s+0\s+0\s+2\n$/);
    // As docs/getting-started.md shows it: no `from`, the last 60 minutes.
    const minutes = await runCli(['usage', key.id, '--interval', 'minute', '--json'], { env, out: (s) => void (out = s), err: (s) => void (err += s) });
    expect(minutes, err).toBe(0);
    expect(JSON.parse(out).buckets).toHaveLength(60);
    const badFlag = await runCli(['usage', key.id, '--interval', 'week'], { env, out: () => {}, err: (s) => void (err = s) });
    expect(badFlag).toBe(2);
    expect(err).toContain('(interval)');
    const missing = await runCli(['usage', 'key_doesnotexist000000000'], { env, out: () => {}, err: (s) => void (err = s) });
    expect(missing).toBe(1);
    expect(err).toBe('No key with this id.\n');
  });
});
