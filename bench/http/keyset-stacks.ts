/**
 * keyset's stacks on each framework: apiKey (keyring defaults: 10,000-entry verification
 * cache, 30 s TTL) + per-key GCRA memory limiter + signed-cursor paginate bound to the
 * `status` filter. Data access is the same binary search the bare and peer stacks use,
 * fed by the verified cursor position. `parts` picks auth only, pagination only, or both
 * (the in-process benchmark measures each alone).
 */
import {
  createApiKeyGuard,
  createKeyAdmin, createKeyring,
  createMemoryKeyStore,
  createPaginator,
  createRateLimiter,
  type DecisionHook,
  type Keyring,
  type PagePlan,
} from '@keyset/core';
import { apiKey as expressApiKey, paginate as expressPaginate, problemHandler as expressProblems, sendPage as expressSendPage } from '@keyset/express';
import { apiKey as fetchApiKey, paginate as fetchPaginate, problemHandler as fetchProblems, sendPage as fetchSendPage } from '@keyset/fetch';
import { apiKey as honoApiKey, paginate as honoPaginate, problemHandler as honoProblems, sendPage as honoSendPage } from '@keyset/hono';
import express, { type Express } from 'express';
import { Hono } from 'hono';
import { BENCH_PREFIX, KEY_COUNT, pageAfter, plainPage, statusOf, type Order, type StatusFilter } from './orders.ts';

export interface Parts {
  auth: boolean;
  paginate: boolean;
}

export const FULL: Parts = { auth: true, paginate: true };

/** What a stack may change: the guard's refused-credentials budget, the limiter's usage hook. */
export interface StackOptions {
  refusedCredentials?: false;
  onDecision?: DecisionHook;
}

/**
 * What the stacks share: a keyring with `keyCount` keys, a GCRA limiter roomy enough to
 * admit every request, a guard, a paginator. `refusedCredentials: false` turns off the
 * guard's per-address budget of refused keys, so that every unknown key reaches the
 * caches, as when a flood comes from more addresses than the budget can tell apart.
 * `onDecision` is the limiter's usage hook (bench/usage.bench.ts attaches a usage counter).
 */
export async function keysetCore(keyCount = KEY_COUNT, options: StackOptions = {}) {
  const { onDecision, ...guardOptions } = options;
  const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: BENCH_PREFIX });
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) keys.push((await createKeyAdmin(keyring).issue({ name: `bench-${i}`, scopes: ['orders:read'] })).key);
  const limiter = createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 }, ...(onDecision === undefined ? {} : { onDecision }) });
  const guard = createApiKeyGuard({ keyring, limiter, ...guardOptions });
  const paginator = createPaginator<Order>({
    endpoint: 'GET /api/orders',
    sort: [
      { key: 'createdAt', dir: 'desc', type: 'timestamp' },
      { key: 'id', dir: 'desc', type: 'int', unique: true },
    ],
    cursor: { secrets: ['benchmark-cursor-secret-0123456789abcdef'] },
  });
  return { keys, keyring, limiter, guard, paginator };
}

function rows(plan: PagePlan, status: StatusFilter): Order[] {
  if (plan.mode !== 'cursor') throw new Error('the benchmark walks in cursor mode');
  const after = plan.after === null ? null : { createdAt: plan.after[0] as string, id: plan.after[1] as number };
  return pageAfter(after, plan.take, status);
}

const filters = (query: URLSearchParams): Record<string, unknown> => {
  const status = statusOf(query.get('status'));
  return status === undefined ? {} : { status };
};

export async function keysetHono(parts: Parts = FULL, keyCount?: number, options?: StackOptions): Promise<{ app: Hono; keys: string[]; keyring: Keyring }> {
  const { keys, keyring, guard, paginator } = await keysetCore(keyCount, options);
  const app = new Hono();
  app.onError(honoProblems());
  if (parts.auth) app.use('/api/*', honoApiKey({ guard, scopes: ['orders:read'] }));
  if (parts.paginate) {
    app.get('/api/orders', honoPaginate(paginator, { filters: (query) => filters(query) }), (c) =>
      honoSendPage(c, rows(c.get('page'), statusOf(c.req.query('status')))),
    );
  } else {
    app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  }
  return { app, keys, keyring };
}

export async function keysetExpress(keyCount?: number): Promise<{ app: Express; keys: string[] }> {
  const { keys, guard, paginator } = await keysetCore(keyCount);
  const app = express();
  app.get(
    '/api/orders',
    expressApiKey({ guard, scopes: ['orders:read'] }),
    expressPaginate(paginator, { filters: (query) => filters(query) }),
    async (req, res) => {
      await expressSendPage(res, rows(res.locals.page, statusOf(typeof req.query.status === 'string' ? req.query.status : null)));
    },
  );
  app.use(expressProblems());
  return { app, keys };
}

/** The Fetch adapter: one `Request → Response` handler (served on Node by `@hono/node-server`'s listener). */
export async function keysetFetch(keyCount?: number): Promise<{ handler: (request: Request) => Promise<Response>; keys: string[] }> {
  const { keys, guard, paginator } = await keysetCore(keyCount);
  const orders = fetchProblems()(
    fetchApiKey({ guard, scopes: ['orders:read'] })(async (request) => {
      const page = await fetchPaginate(request, paginator, { filters });
      return fetchSendPage(page, rows(page, statusOf(new URL(request.url).searchParams.get('status'))));
    }),
  );
  return {
    keys,
    handler: (request) => (new URL(request.url).pathname === '/api/orders' ? orders(request) : Promise.resolve(new Response(null, { status: 404 }))),
  };
}
