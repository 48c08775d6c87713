/**
 * A redis-server of the benchmark's own on a free port (no persistence), so that its
 * INFO counters (commands, bytes, CPU) count the benchmark alone; without `redis-server`
 * on the PATH, TEST_REDIS_URL (default redis://127.0.0.1:6379) instead.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { freePort, startRedis } from '../test/support/own-redis.ts';

export async function ownRedis(): Promise<{ url: string; child?: ChildProcess; own: boolean }> {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    return { url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', own: false };
  }
  const port = await freePort();
  return { url: `redis://127.0.0.1:${port}`, child: await startRedis(port), own: true };
}
