/**
 * apiKey() and paginate() finish through Fastify's `done` when they answer synchronously;
 * when they wait, a rejection must still stop the request as an async hook's did, even
 * one without a reason (`undefined`): `done(undefined)` would let the request through to
 * its handler, unauthenticated.
 */
import type { ApiKeyGuard, Paginator } from '@keyset/core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { apiKey, paginate } from './index.ts';

describe('hooks that wait and are refused without a reason', () => {
  it('apiKey(): a guard whose check rejects with undefined never reaches the handler', async () => {
    const guard = { check: () => Promise.reject(undefined) } as unknown as ApiKeyGuard;
    const app = Fastify();
    let reached = false;
    app.get('/items', { onRequest: apiKey({ guard }) }, async () => {
      reached = true;
      return { ok: true };
    });
    const res = await app.inject({ method: 'GET', url: '/items' });
    await app.close();
    expect(reached).toBe(false);
    expect(res.statusCode).toBe(500);
  });

  it('paginate(): a paginator whose plan rejects with undefined never reaches the handler', async () => {
    const paginator = { plan: () => Promise.reject(undefined), page: () => Promise.reject(new Error('unused')) } as unknown as Paginator<never>;
    const app = Fastify();
    let reached = false;
    app.get('/items', { preHandler: paginate(paginator) }, async () => {
      reached = true;
      return { ok: true };
    });
    const res = await app.inject({ method: 'GET', url: '/items' });
    await app.close();
    expect(reached).toBe(false);
    expect(res.statusCode).toBe(500);
  });
});
