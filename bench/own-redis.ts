/**
 * A redis-server of the benchmark's own on a free port (no persistence), so that its
 * INFO counters (commands, bytes, CPU) count the benchmark alone; without `redis-server`
 * on the PATH, TEST_REDIS_URL (default redis://127.0.0.1:6379) instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function ownRedis(): Promise<{ url: string; child?: ChildProcess; own: boolean }> {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    return { url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', own: false };
  }
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', () => reject(new Error(out)));
  });
  return { url: `redis://127.0.0.1:${port}`, child, own: true };
}
