/**
 * Drives one in-process stack for a fixed number of requests, for an on-CPU profile:
 *
 *   perf record -F 999 -g -o keyset.perf -- node --perf-basic-prof --import tsx bench/profile-driver.ts full
 *   node bench/perf-breakdown.mjs keyset.perf <µs/request printed by this run>
 *
 * Stacks: `bare` (Hono), `auth`, `pagination`, `full` (keyset on Hono), `fetch` (keyset's
 * Fetch adapter, full stack, as `keysetFetch()` serves it). Requests are
 * injected into @hono/node-server's listener as in bench/inprocess.bench.ts, rotating
 * through BENCH_KEYS keys and ~600 cursors. Prints CPU µs per request.
 * Env: PROFILE_REQUESTS (200000).
 */
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { FakeResponse, incoming, type Listener } from './http/fake-node.ts';
import { keysetFetch, keysetHono } from './http/keyset-stacks.ts';
import { KEY_COUNT, plainPage, statusOf } from './http/orders.ts';
import { peerKeys } from './http/peer-stacks.ts';

const which = process.argv[2] ?? 'full';
const N = Number(process.env.PROFILE_REQUESTS ?? 200_000);

let fetchHandler: (request: Request) => Response | Promise<Response>;
let keys: string[];
if (which === 'bare') {
  const app = new Hono();
  app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  fetchHandler = app.fetch;
  keys = peerKeys(KEY_COUNT).keys;
} else if (which === 'fetch') {
  ({ handler: fetchHandler, keys } = await keysetFetch());
} else {
  const parts = { auth: which !== 'pagination', paginate: which !== 'auth' };
  const stack = await keysetHono(parts);
  fetchHandler = stack.app.fetch;
  keys = stack.keys;
}
const listener = getRequestListener(fetchHandler) as unknown as Listener;

async function send(path: string, key: string): Promise<FakeResponse> {
  const res = new FakeResponse();
  await listener(incoming(path, key), res);
  if (res.statusCode !== 200) throw new Error(`${path} → ${res.statusCode} ${res.body}`);
  return res;
}

const paths: string[] = [];
for (const filter of ['', 'status=paid&', 'status=refunded&']) {
  let path = `/api/orders?${filter}limit=20`;
  for (let page = 0; page < 250; page++) {
    paths.push(path);
    const next = (JSON.parse((await send(path, keys[0]!)).body) as { nextCursor: string | null }).nextCursor;
    if (next === null) break;
    path = `/api/orders?${filter}limit=20&cursor=${encodeURIComponent(next)}`;
  }
}
for (let i = 0; i < keys.length; i++) await send(paths[i % paths.length]!, keys[i]!);
const start = process.cpuUsage();
for (let i = 0; i < N; i++) await send(paths[i % paths.length]!, keys[(i * 7919) % keys.length]!);
const used = process.cpuUsage(start);
console.log(`${which}: ${((used.user + used.system) / N).toFixed(2)} CPU µs/request over ${N} requests`);
