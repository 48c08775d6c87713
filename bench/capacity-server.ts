/**
 * The HTTP server of `bench capacity`'s latency and hammer runs, one per process:
 * `node --import tsx bench/capacity-server.ts <stores> <keysFile> [redisUrl]`, `<stores>`
 * one of
 *
 * - `memory`: every limit in the instance's memory (no shared store: the floor);
 * - `redis-parts`: the per-part Redis stores (`createRedisRateLimitStore`,
 *   `createRedisQuotaStore`, `createRedisConcurrencyStore`), each asked on its own, as the
 *   example wired them before the request store;
 * - `redis-request`: one `createRedisRequestStore` for limits, quotas and leases, as the
 *   example wires it now.
 *
 * The stack is the example's with every feature on, on Hono: the key guard (memory key
 * store, warm cache), a key rate limit and quota, an owner rate limit and quota, an
 * in-flight cap per key and per owner, over `@keyset/hono`; the handler answers one page
 * of 20 orders from memory, so only the limits' stores differ between the three servers.
 * Writes the keys it accepts to `keysFile` (the first line is the hammer's key, whose rate
 * limit admits 1 request an hour; the others have room for every request), then prints
 * `READY <port>`. `GET /__bench/stats` answers this process's CPU time and the requests
 * served so far (not counted itself).
 */
import { writeFileSync } from 'node:fs';
import { getRequestListener } from '@hono/node-server';
import {
  createApiKeyGuard,
  createConcurrencyLimit,
  createKeyAdmin,
  createKeyring,
  createMemoryKeyStore,
  createOwnerAdmin,
  createRateLimiter,
  type ConcurrencyStore,
  type QuotaStore,
  type RateLimitStore,
} from '@keyset/core';
import { apiKey, problemHandler } from '@keyset/hono';
import { createRedisConcurrencyStore, createRedisQuotaStore, createRedisRateLimitStore, createRedisRequestStore } from '@keyset/redis';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { plainPage } from './http/orders.ts';
import { serveWithStats } from './http/stats-server.ts';

const [stores = 'memory', keysFile, redisUrl] = process.argv.slice(2);
const KEYS = Number(process.env.CAPACITY_HTTP_KEYS ?? 200);
const OWNERS = Math.max(1, Math.floor(KEYS / 10));
const ROOMY = { remaining: 1e12 };

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'cap_live', lastUsed: false });
const owners = createOwnerAdmin(keyring);
const admin = createKeyAdmin(keyring);
for (let o = 0; o < OWNERS; o++) await owners.create({ id: `cus_${o}`, quota: ROOMY, rateLimits: [{ name: 'hour', limit: 100_000_000, windowSeconds: 3600 }] });
const keys: string[] = [];
// The hammer's key: one request an hour, so every request after its first is refused by its rate limit.
keys.push((await admin.issue({ name: 'hammer', scopes: ['orders:read'], ownerId: 'cus_0', quota: ROOMY, rateLimit: { limit: 1, windowSeconds: 3600 } })).key);
for (let k = 1; k < KEYS; k++) {
  const issued = await admin.issue({ name: `svc-${k}`, scopes: ['orders:read'], ownerId: `cus_${k % OWNERS}`, quota: ROOMY, rateLimit: { limit: 1_000_000, windowSeconds: 10 } });
  keys.push(issued.key);
}

const redis = redisUrl === undefined ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
type Stores = { store?: RateLimitStore; quotaStore?: QuotaStore; leases?: ConcurrencyStore };
function storesOf(): Stores {
  if (stores === 'memory') return {};
  if (redis === undefined) throw new Error(`${stores} needs a Redis URL`);
  if (stores === 'redis-parts') {
    return { store: createRedisRateLimitStore({ redis }), quotaStore: createRedisQuotaStore({ redis }), leases: createRedisConcurrencyStore({ redis }) };
  }
  if (stores === 'redis-request') {
    const one = createRedisRequestStore({ redis });
    return { store: one, quotaStore: one, leases: one };
  }
  throw new Error(`unknown stores ${stores}: memory, redis-parts or redis-request`);
}
const { leases, ...limiterStores } = storesOf();
const guard = createApiKeyGuard({
  keyring,
  limiter: createRateLimiter({ defaultPolicy: { limit: 1_000_000, windowSeconds: 10 }, ...limiterStores }),
  concurrency: createConcurrencyLimit({ max: 50, ownerMax: 100, ...(leases === undefined ? {} : { store: leases }) }),
});
const app = new Hono();
app.onError(problemHandler());
app.use('/api/*', apiKey({ guard, scopes: ['orders:read'] }));
app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'))));
if (keysFile !== undefined) writeFileSync(keysFile, keys.join('\n'));

const listener = getRequestListener(app.fetch);
serveWithStats(listener, () => redis?.disconnect());
