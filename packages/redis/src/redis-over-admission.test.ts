/**
 * Two instances sharing one healthy Redis must never admit more than a key's limit
 * (an earlier limiter admitted up to 184 of 50 per 60 s when Redis answered slower than
 * the store's timeout and every timeout fell back to a fresh local burst).
 *
 * Each instance is a limiter with its own ioredis connection, both with their default
 * timeouts. The connections go through a TCP proxy that delays every Redis reply by
 * 80 ms (longer than the old 50 ms timeout): Redis itself is real and answering, just as
 * slowly as a loaded server. A second run has no added delay, for the busy machine.
 */
import { createRateLimiter, isKeysetError, type RateLimitLogger, type RateLimitPolicy } from '@keyset/core';
import { deleteKeys, redisUrl, startTcpProxy, type TcpProxy } from '@keyset/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from './index.ts';

const url = await redisUrl();
const prefix = `keyset:test:over:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
const TRIALS = 20;
const CLIENTS_PER_INSTANCE = 20;
const REQUESTS_PER_CLIENT = 4;

describe.skipIf(url === undefined)('two instances on one healthy Redis (real Redis)', () => {
  let proxy: TcpProxy;
  const clients: Redis[] = [];
  const warnings: string[] = [];
  const logger: RateLimitLogger = { warn: (_details, message) => warnings.push(message) };

  async function connect(port: number): Promise<Redis> {
    const redis = new Redis({ host: '127.0.0.1', port, enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    redis.on('error', () => undefined);
    await redis.connect();
    clients.push(redis);
    return redis;
  }

  beforeAll(async () => {
    proxy = await startTcpProxy(url as string);
  });

  afterAll(async () => {
    if (clients[0] !== undefined) {
      proxy.latencyMs = 0;
      await deleteKeys(clients[0], prefix);
    }
    for (const client of clients) client.disconnect();
    await proxy?.close();
  });

  async function trials(label: string): Promise<{ admitted: number[]; degraded: number[] }> {
    const instances = await Promise.all(
      [0, 1].map(async () =>
        createRateLimiter({
          store: createRedisRateLimitStore({ redis: await connect(proxy.port), prefix }),
          defaultPolicy: { limit: 1000, windowSeconds: 60 },
          logger,
        }),
      ),
    );
    // 50 per hour: no refill within a trial however slow the machine, so exactly 50 is right.
    const policy: RateLimitPolicy = { limit: 50, windowSeconds: 3600 };
    const admittedPerTrial: number[] = [];
    const degradedPerTrial: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const key = `${label}-${trial}`;
      let admitted = 0;
      let degraded = 0;
      const client = async (limiter: (typeof instances)[number]): Promise<void> => {
        for (let i = 0; i < REQUESTS_PER_CLIENT; i++) {
          try {
            const { decision } = await limiter.check(key, policy);
            admitted++;
            if (decision.degraded !== undefined) degraded++;
          } catch (error) {
            if (!isKeysetError(error) || error.code !== 'rate_limited') throw error;
          }
        }
      };
      await Promise.all(instances.flatMap((limiter) => Array.from({ length: CLIENTS_PER_INSTANCE }, () => client(limiter))));
      admittedPerTrial.push(admitted);
      degradedPerTrial.push(degraded);
    }
    return { admitted: admittedPerTrial, degraded: degradedPerTrial };
  }

  it(`admits exactly the limit in each of ${TRIALS} trials when every Redis reply takes 80 ms`, async () => {
    proxy.latencyMs = 80;
    const { admitted, degraded } = await trials('slow');
    console.info(`80 ms replies: admitted per trial ${JSON.stringify(admitted)} (limit 50, ${2 * CLIENTS_PER_INSTANCE * REQUESTS_PER_CLIENT} requests)`);
    expect(admitted).toEqual(Array(TRIALS).fill(50));
    // Every decision came from Redis: none from a fallback while Redis was answering.
    expect(degraded).toEqual(Array(TRIALS).fill(0));
    expect(warnings).toEqual([]);
  }, 120_000);

  it(`admits exactly the limit in each of ${TRIALS} trials with no added delay`, async () => {
    proxy.latencyMs = 0;
    const { admitted, degraded } = await trials('plain');
    console.info(`no added delay: admitted per trial ${JSON.stringify(admitted)}`);
    expect(admitted).toEqual(Array(TRIALS).fill(50));
    expect(degraded).toEqual(Array(TRIALS).fill(0));
    expect(warnings).toEqual([]);
  }, 120_000);
});
