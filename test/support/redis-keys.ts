/**
 * Cleaning up after a test on the shared Redis: every test writes under a key prefix of
 * its own, and deletes what it wrote when it is done.
 */

/** The two calls `deleteKeys` makes, as ioredis's `Redis` and `Cluster` node clients have them. */
export interface RedisKeysClient {
  keys(pattern: string): Promise<string[]>;
  del(...keys: string[]): Promise<number>;
}

/** Deletes every key whose name starts with `prefix`, 500 to a `DEL`. */
export async function deleteKeys(redis: RedisKeysClient, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
}
