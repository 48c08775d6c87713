/**
 * A client of a redis-server of the test's own (started, killed and restarted with
 * `startRedis` / `killRedis` of the shared test support).
 */
import { Redis } from 'ioredis';

export { freePort, killRedis, ownRedisAvailable, startRedis } from '@keyset/test-support';

/** A client as the example makes it (no offline queue), reconnecting every 50 ms. */
export async function connectRedis(port: number): Promise<Redis> {
  const redis = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 50, lazyConnect: true });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** Resolves when `redis` is connected and answers (after a restart: once it reconnected). */
export async function whenReady(redis: Redis): Promise<void> {
  for (;;) {
    if (redis.status === 'ready') {
      try {
        await redis.ping();
        return;
      } catch {
        /* not yet */
      }
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        redis.off('ready', done);
        resolve();
      };
      redis.once('ready', done);
      setTimeout(done, 50); // re-check the status, in case 'ready' fired before we listened
    });
  }
}
