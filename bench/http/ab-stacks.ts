/**
 * keyset's Hono stack made from the built packages of any checkout, for the same-process
 * A/B (bench/inprocess-ab.bench.ts) and the profile of one of its sides
 * (bench/profile-ab-driver.ts): both build exactly the same app from either side.
 */
import { Hono } from 'hono';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_PREFIX, KEY_COUNT, pageAfter, plainPage, statusOf, type Order } from './orders.ts';

// Each build's API as the stacks use it (both builds have these names).
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Core = any;
export type HonoAdapter = any;

/** One checkout's `@keyset/core` and `@keyset/hono`, from `entry` (`dist/index.js`, or `src/index.ts` from the sources). */
export async function load(dir: string, entry: string): Promise<{ core: Core; hono: HonoAdapter }> {
  const url = (p: string) => pathToFileURL(resolve(dir, p)).href;
  return { core: await import(url(`packages/core/${entry}`)), hono: await import(url(`packages/hono/${entry}`)) };
}

/** keyset-stacks.ts's keysetHono(), made from the given build. */
export async function keysetHono(build: { core: Core; hono: HonoAdapter }, parts: { auth: boolean; paginate: boolean }) {
  const { core, hono } = build;
  const keyring = core.createKeyring({ store: core.createMemoryKeyStore(), prefix: BENCH_PREFIX });
  // issue() moved from the keyring to createKeyAdmin() after d6f2a0a.
  const admin = core.createKeyAdmin ? core.createKeyAdmin(keyring) : keyring;
  const keys: string[] = [];
  for (let i = 0; i < KEY_COUNT; i++) keys.push((await admin.issue({ name: `bench-${i}`, scopes: ['orders:read'] })).key);
  const limiter = core.createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 } });
  const guard = core.createApiKeyGuard({ keyring, limiter });
  const paginator = core.createPaginator({
    endpoint: 'GET /api/orders',
    sort: [
      { key: 'createdAt', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'int', unique: true },
    ],
    cursor: { secrets: ['benchmark-cursor-secret-0123456789abcdef'] },
  });
  const app = new Hono();
  app.onError(hono.problemHandler());
  if (parts.auth) app.use('/api/*', hono.apiKey({ guard, scopes: ['orders:read'] }));
  if (parts.paginate) {
    app.get(
      '/api/orders',
      hono.paginate(paginator, {
        // The raw query is the first argument since the filters callback became (query, c),
        // the second before: pick it by type, so both builds bind the same filter.
        filters: (first: unknown, second: unknown) => {
          const query = (first instanceof URLSearchParams ? first : second) as URLSearchParams;
          const status = statusOf(query.get('status'));
          return status === undefined ? {} : { status };
        },
      }),
      (c) => {
        const plan = c.get('page' as never) as { mode: string; after: [string, number] | null; take: number };
        if (plan.mode !== 'cursor') throw new Error('the benchmark walks in cursor mode');
        const after = plan.after === null ? null : { createdAt: plan.after[0], id: plan.after[1] };
        const items: Order[] = pageAfter(after, plan.take, statusOf(c.req.query('status')));
        return hono.sendPage(c, items);
      },
    );
  } else {
    app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  }
  return { app, keys };
}
