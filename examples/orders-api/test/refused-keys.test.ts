/**
 * Over HTTP: REFUSED_KEY_LIMIT bounds the refused keys one client
 * address may send; past it every request from that address is 429 rate_limited with
 * Retry-After, valid keys included (per-address cases: packages/core, refused-credentials.test.ts).
 */
import { generateKey } from '@keyset/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { call, startApi, type TestApi } from './helpers.ts';

describe('REFUSED_KEY_LIMIT', () => {
  it('is 60/1m by default, takes a rate or off, and names itself when wrong', () => {
    expect(loadConfig({}).refusedKeyLimit).toEqual({ limit: 60, windowSeconds: 60 });
    expect(loadConfig({ REFUSED_KEY_LIMIT: '10/1s' }).refusedKeyLimit).toEqual({ limit: 10, windowSeconds: 1 });
    expect(loadConfig({ REFUSED_KEY_LIMIT: 'off' }).refusedKeyLimit).toBe(false);
    expect(() => loadConfig({ REFUSED_KEY_LIMIT: 'lots' })).toThrow(/REFUSED_KEY_LIMIT/);
  });

  describe('over HTTP', () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await startApi({ seedOrders: 10, refusedKeyLimit: { limit: 5, windowSeconds: 3600 } });
    }, 60_000);
    afterAll(async () => {
      await t?.stop({ remove: true });
    });

    it('5 unknown keys are 401, then the address gets 429 with Retry-After, its valid key too', async () => {
      for (let i = 0; i < 5; i++) {
        const res = await call(t.api.url, '/api/orders?limit=1', { key: generateKey('ks_live') });
        expect([res.status, res.body.code]).toEqual([401, 'invalid_api_key']);
      }
      const over = await call(t.api.url, '/api/orders?limit=1', { key: generateKey('ks_live') });
      expect([over.status, over.body.code]).toEqual([429, 'rate_limited']);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await call(t.api.url, '/api/keys', { key: t.api.adminKey! })).status).toBe(429);
    });
  });
});
