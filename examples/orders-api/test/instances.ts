/**
 * The example's entry point as its own process, for the tests that run several instances
 * on one database and Redis (in-flight caps, usage counting): start one, wait until it
 * listens, stop it with a signal (SIGKILL for a crash).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export interface Instance {
  child: ChildProcess;
  url: string;
}

/** Starts the example's entry point with `env`; resolves once it logs that it listens. */
export function startInstance(env: Record<string, string>): Promise<Instance> {
  const { CI: _ci, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/orders-api/src/main.ts'], {
    cwd: ROOT,
    env: { ...inherited, TSX_TSCONFIG_PATH: `${ROOT}tsconfig.json`, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let started = false;
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!started) reject(new Error(`the instance exited (${code ?? signal}) before listening:\n${out}`));
    });
    // Read stdout to the end (request logs included), or the instance blocks on a full pipe.
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (started) return;
      out += chunk;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'orders API listening' && entry.url !== undefined) {
          started = true;
          resolve({ child, url: entry.url });
        }
      }
    });
  });
}

export const exited = (instance: Instance): boolean => instance.child.exitCode !== null || instance.child.signalCode !== null;

/** Sends `signal` and resolves once the process has exited. */
export const stop = (instance: Instance, signal: NodeJS.Signals = 'SIGTERM') =>
  new Promise<void>((resolve) => {
    if (exited(instance)) return resolve();
    instance.child.once('exit', () => resolve());
    instance.child.kill(signal);
  });
