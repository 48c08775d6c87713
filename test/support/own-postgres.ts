/**
 * A PostgreSQL server of a test's or benchmark's own, to freeze (SIGSTOP every process of
 * it: the postmaster and each backend, so a statement already sent waits in its socket and
 * runs when thawed, as on a stopped VM) and to stop, by PID, never touching the shared
 * server. initdb into a temporary directory, then `postgres` on a free port with fsync off
 * (nothing here survives the test). As root, both run as the `postgres` user (initdb
 * refuses root). When initdb is not found, tests skip with a message, except under
 * CI=true, where that fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './own-redis.ts';

/** A running server of one's own. */
export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly pid: number;
  /** SIGSTOP to the postmaster and every backend: nothing answers, connections stay open. */
  freeze(): void;
  /** SIGCONT to the same processes (and any started since). */
  thaw(): void;
  /** Stops the server (fast shutdown, SIGINT to the postmaster by PID) and removes its directory. */
  stop(): Promise<void>;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) if (existsSync(join(root, version, 'bin', 'initdb'))) return join(root, version, 'bin');
  }
  return spawnSync('initdb', ['--version']).status === 0 ? '' : undefined;
}

/** Whether a PostgreSQL server can be started here (throws under CI=true when not). */
export function ownPostgresAvailable(): boolean {
  const available = binDir() !== undefined;
  if (!available) {
    const message = 'initdb and postgres are not installed (neither on PATH nor under /usr/lib/postgresql): these tests start and freeze their own PostgreSQL';
    if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
    console.warn(`skipping: ${message}`);
  }
  return available;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function command(bin: string, args: readonly string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, [...args]];
}

/** The PIDs of the server's processes: the postmaster and its children (from /proc). */
function processesOf(postmaster: number): number[] {
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (after the parenthesised command) is the parent PID.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** initdb, then starts the server; resolves once it accepts connections. */
export async function startOwnPostgres(options: { timeoutMs?: number } = {}): Promise<OwnPostgres> {
  const { timeoutMs = 30_000 } = options;
  const bin = binDir();
  if (bin === undefined) throw new Error('initdb is not installed');
  const at = (name: string): string => (bin === '' ? name : join(bin, name));
  const dir = mkdtempSync(join(tmpdir(), 'keyset-pg-'));
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = command(at('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const [cmd, args] = command(at('postgres'), ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=60', '-c', 'shared_buffers=16MB']);
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`postgres did not start:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited (${String(code)}):\n${output}`));
    });
  });
  // Under runuser the child is runuser; the postmaster is its child (postmaster.pid says which).
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const signal = (name: NodeJS.Signals): void => {
    // runuser stops itself when its child stops (as su does), so it gets SIGCONT too.
    const wrapper = child.pid !== undefined && child.pid !== pid && name === 'SIGCONT' ? [child.pid] : [];
    for (const p of [...processesOf(pid), ...wrapper]) {
      try {
        process.kill(p, name);
      } catch {
        // Gone already.
      }
    }
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid,
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    async stop(): Promise<void> {
      signal('SIGCONT');
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        try {
          process.kill(pid, 'SIGINT');
        } catch {
          // Already gone.
        }
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
