/**
 * Rate-limit decisions per second, side by side in one process:
 * - in memory: keyset's GCRA memory store (sync `decide`) and limiter (`check`, with
 *   headers) vs rate-limiter-flexible's `RateLimiterMemory.consume` and
 *   express-rate-limit's `MemoryStore.increment` (fixed window);
 * - on Redis: keyset's Redis store (one EVALSHA) vs rate-limiter-flexible's
 *   `RateLimiterRedis.consume`, plus the Redis commands each sends per decision
 *   (INFO commandstats delta on a redis-server this bench starts, so nothing else counts).
 * 1000 keys round-robin; limits high enough that every request is admitted (the
 * common path) and a second memory group where most requests are refused.
 *
 * Run: npx -y pnpm@10.34.9 bench rate-limit
 */
import { createMemoryRateLimitStore, createRateLimiter, type RateLimitPolicy } from '@keyset/core';
import { createRedisRateLimitStore } from '@keyset/redis';
import { MemoryStore } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { ownRedis } from './own-redis.ts';
import { compare, save, setting, type Row } from './support.ts';

const N_KEYS = setting('BENCH_KEYS', 1000, 20);
/** Decisions over which the Redis commands per decision are counted. */
const COUNTED = setting('BENCH_COUNTED', 2000, 20);
const keys = Array.from({ length: N_KEYS }, (_, i) => `key_${i}`);
let i = 0;
const nextKey = (): string => keys[i++ % N_KEYS]!;
const silent = { warn(): void {} };

// --- memory ---------------------------------------------------------------------------
const roomy: RateLimitPolicy = { limit: 10_000_000, windowSeconds: 60 };
const keysetStore = createMemoryRateLimitStore();
const keysetLimiter = createRateLimiter({ defaultPolicy: roomy, logger: silent });
const rlfMemory = new RateLimiterMemory({ points: 10_000_000, duration: 60 });
const erlMemory = new MemoryStore();
erlMemory.init({ windowMs: 60_000 } as Parameters<MemoryStore['init']>[0]);

const memoryRows = await compare(`memory, ${N_KEYS} keys round-robin, admitted`, 'rate-limiter-flexible RateLimiterMemory.consume', [
  { name: 'keyset memory store decide (sync)', fn: () => keysetStore.decide([{ key: nextKey(), policy: roomy }]) },
  { name: 'keyset limiter.check (memory, headers)', fn: () => keysetLimiter.check(nextKey()) },
  { name: 'rate-limiter-flexible RateLimiterMemory.consume', fn: () => rlfMemory.consume(nextKey()) },
  { name: 'express-rate-limit MemoryStore.increment', fn: () => erlMemory.increment(nextKey()) },
]);

// Mostly refused: 10 per minute, hammered. rate-limiter-flexible rejects its promise when
// over the limit; keyset's limiter throws a KeysetError (429) with headers.
const tight: RateLimitPolicy = { limit: 10, windowSeconds: 60 };
const tightLimiter = createRateLimiter({ defaultPolicy: tight, logger: silent });
const tightStore = createMemoryRateLimitStore();
const rlfTight = new RateLimiterMemory({ points: 10, duration: 60 });
const refusedRows = await compare(`memory, ${N_KEYS} keys round-robin, refused`, 'rate-limiter-flexible RateLimiterMemory.consume', [
  { name: 'keyset memory store decide (sync)', fn: () => tightStore.decide([{ key: nextKey(), policy: tight }]) },
  { name: 'keyset limiter.check (429 KeysetError)', fn: () => tightLimiter.check(nextKey()).catch(() => undefined) },
  { name: 'rate-limiter-flexible RateLimiterMemory.consume', fn: () => rlfTight.consume(nextKey()).catch(() => undefined) },
]);

// --- Redis ----------------------------------------------------------------------------
async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const stats = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats.set(match[1]!, Number(match[2]));
  return stats;
}

/** Redis commands per decision over `n` sequential decisions (INFO itself excluded). */
async function commandsPerDecision(redis: Redis, n: number, decide: () => Promise<unknown>): Promise<Record<string, number>> {
  await decide(); // load scripts first
  const before = await commandStats(redis);
  for (let k = 0; k < n; k++) await decide();
  const after = await commandStats(redis);
  const perDecision: Record<string, number> = {};
  for (const [name, calls] of after) {
    const delta = calls - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0);
    if (delta > 0) perDecision[name] = delta / n;
  }
  return perDecision;
}

const server = await ownRedis();
let redisRows: Row[] = [];
let commands: Record<string, Record<string, number>> = {};
const redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
try {
  await redis.connect();
  const redisStore = createRedisRateLimitStore({ redis, prefix: 'bench:keyset:', timeoutMs: 1000 });
  const redisLimiter = createRateLimiter({ store: redisStore, defaultPolicy: roomy, logger: silent, timeoutMs: 1000 });
  const rlfRedis = new RateLimiterRedis({ storeClient: redis, points: 10_000_000, duration: 60, keyPrefix: 'bench:rlf' });
  const twoPolicies: RateLimitPolicy = { limit: 10_000_000, windowSeconds: 3600, name: 'hour' };

  redisRows = await compare(`Redis (${server.own ? 'own redis-server' : server.url}), ${N_KEYS} keys, sequential`, 'rate-limiter-flexible RateLimiterRedis.consume', [
    { name: 'keyset Redis store decide (1 EVALSHA)', fn: () => redisStore.decide([{ key: nextKey(), policy: roomy }]) },
    {
      name: 'keyset Redis store decide, 2 policies (1 EVALSHA)',
      fn: () => {
        const key = nextKey();
        return redisStore.decide([
          { key, policy: roomy },
          { key, policy: twoPolicies },
        ]);
      },
    },
    { name: 'keyset limiter.check (Redis, headers)', fn: () => redisLimiter.check(nextKey()) },
    { name: 'rate-limiter-flexible RateLimiterRedis.consume', fn: () => rlfRedis.consume(nextKey()) },
  ]);

  commands = {
    'keyset Redis store decide': await commandsPerDecision(redis, COUNTED, () => redisStore.decide([{ key: nextKey(), policy: roomy }])),
    'rate-limiter-flexible RateLimiterRedis.consume': await commandsPerDecision(redis, COUNTED, () => rlfRedis.consume(nextKey())),
  };
  console.log(`\nRedis commands per decision (INFO commandstats delta over ${COUNTED} decisions)`);
  console.table(commands);
} finally {
  redis.disconnect();
  server.child?.kill('SIGKILL');
}

save('rate-limit', {
  memory: memoryRows,
  memoryRefused: refusedRows,
  redis: redisRows,
  redisServer: server.own ? 'own redis-server on localhost' : server.url,
  redisCommandsPerDecision: commands,
});
