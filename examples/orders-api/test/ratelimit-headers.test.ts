/**
 * RATE_LIMIT_HEADERS: a real client library, `ratelimit-header-parser`,
 * reads the example's limit, remaining and reset in `draft-7` and in `legacy` mode, over
 * real HTTP on one PGlite database. It cannot read the default `draft-11` (the reason the
 * setting exists), and the variable is checked like every other.
 */
import { rmSync } from 'node:fs';
import { parseRateLimit } from 'ratelimit-header-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, loadConfig } from '../src/config.ts';
import { createKeyServices } from '../src/keys/key-services.ts';
import { createApp } from '../src/app/create-app.ts';
import { createAdapterServer } from '../src/adapter-server.ts';
import { loadOrCreateCursorSecret } from '../src/data-dir.ts';
import { call, startApi, type TestApi } from './helpers.ts';
import type { AddressInfo } from 'node:net';
import type { RateLimitHeaderFormat } from '@keyset/core';

describe('RATE_LIMIT_HEADERS', () => {
  it('reads one format or legacy with one draft; anything else is a configuration problem naming it', () => {
    expect(loadConfig({}).rateLimitHeaders).toEqual(['draft-11']);
    expect(loadConfig({ RATE_LIMIT_HEADERS: 'draft-7' }).rateLimitHeaders).toEqual(['draft-7']);
    expect(loadConfig({ RATE_LIMIT_HEADERS: ' draft-7 , legacy ' }).rateLimitHeaders).toEqual(['draft-7', 'legacy']);
    expect(loadConfig({ RATE_LIMIT_HEADERS: 'legacy' }).rateLimitHeaders).toEqual(['legacy']);
    for (const bad of ['draft-8', 'draft-11,draft-7', 'legacy,legacy', ',', 'Draft-7']) {
      expect(() => loadConfig({ RATE_LIMIT_HEADERS: bad }), bad).toThrow(ConfigurationError);
      expect(() => loadConfig({ RATE_LIMIT_HEADERS: bad }), bad).toThrow(/RATE_LIMIT_HEADERS must be draft-11, draft-7 or legacy/);
    }
  });
});

describe('ratelimit-header-parser reads the example', () => {
  let t: TestApi;
  let reader: string;
  const servers: Array<{ url: string; close(): Promise<void> }> = [];

  /** One more server over `t`'s database whose limiter sends `formats`. */
  async function serveWith(formats: readonly RateLimitHeaderFormat[]): Promise<string> {
    const { api } = t;
    const keys = await createKeyServices({ db: api.db, config: { ...api.config, rateLimitHeaders: formats }, logger: api.logger });
    const app = createApp({ db: api.db, keyring: keys.keyring, guard: keys.guard, limiter: keys.limiter, cursorSecrets: api.config.cursorSecrets ?? [loadOrCreateCursorSecret(t.dataDir)] });
    const server = await createAdapterServer('hono', app, { logger: api.logger, publicUrl: undefined });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    servers.push({
      url,
      close: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await keys.close();
      },
    });
    return url;
  }

  beforeAll(async () => {
    t = await startApi({ seedOrders: 30, rateLimitHeaders: ['draft-7'] });
    const issued = await call(t.api.url, '/api/keys', {
      key: t.api.adminKey!,
      method: 'POST',
      body: { name: 'parsed', scopes: ['orders:read'], rateLimit: { limit: 5, windowSeconds: 60 } },
    });
    expect(issued.status).toBe(201);
    reader = issued.body.key;
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await server.close();
    await t?.stop();
    if (t) rmSync(t.dataDir, { recursive: true, force: true });
  });

  it('draft-7 (RATE_LIMIT_HEADERS=draft-7): limit, remaining and reset, then 0 remaining on the 429', async () => {
    const before = Date.now();
    const res = await fetch(`${t.api.url}/api/orders?limit=2`, { headers: { authorization: `ApiKey ${reader}` } });
    expect(res.status).toBe(200);
    const parsed = parseRateLimit(res);
    expect(parsed).toMatchObject({ limit: 5, remaining: 4, used: 1 });
    // Reset: when the whole budget is back, at most one window (60 s) from now.
    expect(parsed!.reset!.getTime()).toBeGreaterThan(before);
    expect(parsed!.reset!.getTime()).toBeLessThanOrEqual(Date.now() + 61_000);
    let last = res;
    for (let i = 0; i < 5; i++) last = await fetch(`${t.api.url}/api/orders?limit=2`, { headers: { authorization: `ApiKey ${reader}` } });
    expect(last.status).toBe(429);
    expect(parseRateLimit(last)).toMatchObject({ limit: 5, remaining: 0 });
  });

  it('legacy (RATE_LIMIT_HEADERS=legacy): X-RateLimit-Limit, -Remaining and -Reset', async () => {
    const url = await serveWith(['legacy']);
    // A limiter of its own (memory store): the key's budget starts full again.
    const before = Date.now();
    const res = await fetch(`${url}/api/orders?limit=2`, { headers: { authorization: `ApiKey ${reader}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('5');
    const parsed = parseRateLimit(res);
    expect(parsed).toMatchObject({ limit: 5, remaining: 4 });
    expect(parsed!.reset!.getTime()).toBeGreaterThan(before - 1000); // Unix seconds: rounded down
    expect(parsed!.reset!.getTime()).toBeLessThanOrEqual(Date.now() + 61_000);
  });

  it('draft-11, the default, is what the parser cannot read: its limit comes out NaN', async () => {
    const url = await serveWith(['draft-11']);
    const res = await fetch(`${url}/api/orders?limit=2`, { headers: { authorization: `ApiKey ${reader}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/;r=4;t=\d+$/);
    const parsed = parseRateLimit(res);
    expect(parsed === undefined || Number.isNaN(parsed.limit)).toBe(true);
  });
});
