/**
 * Drives one keyset Hono stack made from the built packages of one checkout, for an on-CPU
 * profile of one side of bench/inprocess-ab.bench.ts:
 *
 *   perf record -F 999 -g -o base.perf -- node --perf-basic-prof --import tsx bench/profile-ab-driver.ts full ../baseline
 *
 * Stacks: `auth`, `pagination`, `full`. The checkout defaults to this one. Prints CPU µs
 * per request. Env: PROFILE_REQUESTS (200000). Run with TSX_TSCONFIG_PATH=tsconfig.base.json
 * as the A/B is.
 */
import { Hono } from 'hono';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stackTimer, warmStack } from './http/fake-node.ts';
import { BENCH_PREFIX, KEY_COUNT, pageAfter, plainPage, statusOf, type Order } from './http/orders.ts';

const which = process.argv[2] ?? 'full';
const dir = resolve(process.argv[3] ?? resolve(new URL('.', import.meta.url).pathname, '..'));
const N = Number(process.env.PROFILE_REQUESTS ?? 200_000);
/* eslint-disable @typescript-eslint/no-explicit-any */
const url = (p: string) => pathToFileURL(resolve(dir, p)).href;
const core: any = await import(url('packages/core/dist/index.js'));
const hono: any = await import(url('packages/hono/dist/index.js'));
const parts = { auth: which !== 'pagination', paginate: which !== 'auth' };

const keyring = core.createKeyring({ store: core.createMemoryKeyStore(), prefix: BENCH_PREFIX });
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
  // The filters callback's arguments changed order after 8a0acbe: read whichever is the query.
  const filters = (a: unknown, b: unknown) => {
    const query = (a instanceof URLSearchParams ? a : b) as URLSearchParams;
    const status = statusOf(query.get('status'));
    return status === undefined ? {} : { status };
  };
  app.get('/api/orders', hono.paginate(paginator, { filters }), (c) => {
    const plan = c.get('page' as never) as { after: [string, number] | null; take: number };
    const after = plan.after === null ? null : { createdAt: plan.after[0], id: plan.after[1] };
    const items: Order[] = pageAfter(after, plan.take, statusOf(c.req.query('status')));
    return hono.sendPage(c, items);
  });
} else {
  app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
}
const stack = await warmStack(which, app, keys, 250);
const time = stackTimer(N);
console.log(`${which} ${dir}: ${(await time(stack)).toFixed(2)} CPU µs/request over ${N} requests`);
