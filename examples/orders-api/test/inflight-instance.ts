/**
 * One instance for inflight-instances.test.ts: a Hono server in its own process with the
 * production wiring of an in-flight limit (keys in PostgreSQL, leases in Redis), the way a
 * service runs keyset on several instances. `GET /work?ms=` measures in-flight requests
 * itself: it counts itself in and out of a Redis counter and keeps the highest count seen.
 * `GET /hold` never answers (the test kills the process with it in flight) and says so on
 * stdout. Test support only.
 */
import { serve } from '@hono/node-server';
import { createApiKeyGuard, createConcurrencyLimit, createKeyring } from '@keyset/core';
import { apiKey, problemHandler } from '@keyset/hono';
import { createPostgresKeyStore } from '@keyset/postgres';
import { createRedisConcurrencyStore } from '@keyset/redis';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import pg from 'pg';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const run = env('INFLIGHT_RUN');
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });
const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool, schema: env('INFLIGHT_SCHEMA') }), prefix: 'inflight_test', lastUsed: false });
const guard = createApiKeyGuard({
  keyring,
  refusedCredentials: false,
  concurrency: createConcurrencyLimit({
    max: Number(env('INFLIGHT_MAX')),
    leaseTtlSeconds: Number(env('INFLIGHT_LEASE_TTL_SECONDS')),
    store: createRedisConcurrencyStore({ redis, prefix: `keyset:test:${run}:` }),
  }),
});

const PEAK = "local n = redis.call('INCR', KEYS[1]) if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end return n";
const app = new Hono();
app.get('/work', apiKey({ guard }), async (c) => {
  await redis.eval(PEAK, 2, `${run}:now`, `${run}:peak`);
  try {
    await new Promise((resolve) => setTimeout(resolve, Number(c.req.query('ms') ?? '50')));
  } finally {
    await redis.decr(`${run}:now`);
  }
  return c.json({ ok: true });
});
let holding = 0;
app.get('/hold', apiKey({ guard }), () => {
  holding += 1;
  process.stdout.write(`holding ${holding}\n`);
  return new Promise<Response>(() => {});
});
app.onError(problemHandler());
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(`listening ${info.port}\n`));
