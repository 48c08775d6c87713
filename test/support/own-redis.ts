/**
 * A redis-server of a test's or benchmark's own, to kill and restart: started on a free
 * port without persistence (`--save ""`, `--appendonly no`), so a restart loses every key,
 * as a server without persistence (or a failover to an empty replica) does. When the
 * binary is not on PATH, tests skip with a message, except under CI=true, where that fails
 * the run. Also the free-port helper the tests that start their own servers share.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Whether `redis-server` can be started (throws under CI=true when not). */
export function ownRedisAvailable(): boolean {
  const available = spawnSync('redis-server', ['--version']).status === 0;
  if (!available) {
    const message = 'redis-server is not on PATH: these tests start, kill and restart their own server';
    if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
    console.warn(`skipping: ${message}`);
  }
  return available;
}

/** A local TCP port nothing listens on now: bound once on 127.0.0.1, then released. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server on `port`, without persistence, with `args` added (a cluster node's
 * options); resolves once it accepts connections, or fails after `timeoutMs`.
 */
export function startRedis(port: number, options: { args?: readonly string[]; timeoutMs?: number } = {}): Promise<ChildProcess> {
  const { args = [], timeoutMs = 10_000 } = options;
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${String(code)}):\n${output}`));
    });
  });
}

/** SIGKILL by the child's PID; resolves when it exited. */
export function killRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
