/**
 * keyset's full stack on each framework: apiKey (warm verification cache) + per-key
 * GCRA memory limiter + signed-cursor paginate. Data access is the same binary search
 * the bare and peer stacks use, fed by the verified cursor position.
 */
import {
  createApiKeyGuard,
  createKeyring,
  createMemoryKeyStore,
  createPaginator,
  createRateLimiter,
  type PagePlan,
} from '@keyset/core';
import { apiKey as expressApiKey, paginate as expressPaginate, problemHandler as expressProblems, sendPage as expressSendPage } from '@keyset/express';
import { apiKey as honoApiKey, paginate as honoPaginate, problemHandler as honoProblems, sendPage as honoSendPage } from '@keyset/hono';
import express, { type Express } from 'express';
import { Hono } from 'hono';
import { pageAfter, type Order } from './orders.ts';

async function core() {
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'bench_live' });
  const { key } = await keyring.issue({ name: 'bench', scopes: ['orders:read'] });
  const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 } });
  const guard = createApiKeyGuard({ keyring, limiter });
  const paginator = createPaginator<Order>({
    endpoint: 'GET /api/orders',
    sort: [
      { key: 'createdAt', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'int', unique: true },
    ],
    cursor: { secrets: ['benchmark-cursor-secret-0123456789abcdef'] },
  });
  return { key, guard, paginator };
}

function rows(plan: PagePlan): Order[] {
  if (plan.mode !== 'cursor') throw new Error('the benchmark walks in cursor mode');
  const after = plan.after === null ? null : { createdAt: plan.after[0] as string, id: plan.after[1] as number };
  return pageAfter(after, plan.take);
}

export async function keysetHono(): Promise<{ app: Hono; key: string }> {
  const { key, guard, paginator } = await core();
  const app = new Hono();
  app.onError(honoProblems());
  app.get('/api/orders', honoApiKey({ guard, scopes: ['orders:read'] }), honoPaginate(paginator), (c) =>
    honoSendPage(c, rows(c.get('page'))),
  );
  return { app, key };
}

export async function keysetExpress(): Promise<{ app: Express; key: string }> {
  const { key, guard, paginator } = await core();
  const app = express();
  app.get('/api/orders', expressApiKey({ guard, scopes: ['orders:read'] }), expressPaginate(paginator), async (_req, res) => {
    await expressSendPage(res, rows(res.locals.page));
  });
  app.use(expressProblems());
  return { app, key };
}
