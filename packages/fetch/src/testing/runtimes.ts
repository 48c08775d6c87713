/**
 * Starts the conformance app under Bun, Deno or workerd, each installed from npm as a
 * devDependency of this package: bundles the runtime's entry with esbuild (Web Crypto
 * provider, workspace sources), starts the runtime on a free port, and stops it by PID.
 * A runtime that is not installed is skipped with a message, or fails under `CI=true`.
 * Test support only (runs in the Node test process).
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORLD_PATH } from '@keyset/conformance/fixture';
import { overHttp, remoteWorld } from '@keyset/conformance';
import type { RunningApp } from '@keyset/conformance';
import { freePort } from '@keyset/test-support';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..', '..');
const require = createRequire(join(here, '..', '..', 'package.json'));

/** The runtimes the fetch adapter is tested on, besides Node. */
export type RuntimeName = 'bun' | 'deno' | 'workerd';

interface Runtime {
  /** The platform binary, or why it is missing. */
  binary(): string | Error;
  entry: string;
  /** Arguments to serve `bundle` (in `dir`); `port` is set for runtimes that cannot pick one. */
  args(bundle: string, dir: string, port: number): string[];
  /** Whether the runtime prints `{"port":…}` itself (else it listens on the port given). */
  printsPort: boolean;
}

function tryResolve(fn: () => string): string | Error {
  try {
    const path = fn();
    return existsSync(path) ? path : new Error(`${path} does not exist`);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

const RUNTIMES: Record<RuntimeName, Runtime> = {
  bun: {
    // The npm package's postinstall (allowed in pnpm-workspace.yaml) puts the binary here.
    binary: () => tryResolve(() => join(dirname(require.resolve('bun/package.json')), 'bin', 'bun.exe')),
    entry: 'server.bun.ts',
    args: (bundle) => ['run', '--no-install', bundle],
    printsPort: true,
  },
  deno: {
    binary: () =>
      tryResolve(() => {
        const beside = join(dirname(require.resolve('deno/package.json')), 'deno');
        return existsSync(beside) ? beside : (require('deno/install_api.cjs') as { runInstall(): string }).runInstall();
      }),
    entry: 'server.deno.ts',
    args: (bundle) => ['run', '--quiet', '--no-prompt', '--allow-net=127.0.0.1', bundle],
    printsPort: true,
  },
  workerd: {
    binary: () => tryResolve(() => (require('workerd') as { default: string }).default),
    entry: 'worker.workerd.ts',
    args: (bundle, dir, port) => {
      const config = join(dir, 'config.capnp');
      writeFileSync(
        config,
        `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "${bundle.slice(dir.length + 1)}")],
  compatibilityDate = "2026-11-01",
);
`,
      );
      return ['serve', config];
    },
    printsPort: false,
  },
};

/**
 * The runtime's binary if it works (`--version` succeeds); otherwise `undefined` with a
 * warning, or an error under `CI=true`.
 */
export function findRuntime(name: RuntimeName): string | undefined {
  const binary = RUNTIMES[name].binary();
  let problem = binary instanceof Error ? binary.message : undefined;
  if (typeof binary === 'string') {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status !== 0) problem = `\`${name} --version\` failed: ${(probe.stderr || String(probe.error)).trim().slice(0, 200)}`;
  }
  if (problem === undefined) return binary as string;
  const message = `${name} is not runnable (${problem}); run \`npx -y pnpm@10.34.9 install\` to install it from npm`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the ${name} conformance run: ${message}`);
  return undefined;
}

/** Bundles the runtime's entry into `dir`: one ES module, Web Crypto, no `node:` import. */
async function bundle(name: RuntimeName, dir: string): Promise<string> {
  const outfile = join(dir, `${name}.mjs`);
  await build({
    entryPoints: [join(here, RUNTIMES[name].entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'silent',
    tsconfig: join(root, 'tsconfig.json'),
    plugins: [
      {
        name: 'web-crypto',
        setup(b) {
          // What a bundler picks for these runtimes through @keyset/core's `#crypto` conditions.
          b.onResolve({ filter: /^#crypto$/ }, () => ({ path: join(root, 'packages', 'core', 'src', 'crypto', 'crypto.web.ts') }));
        },
      },
    ],
  });
  return outfile;
}

/** Resolves the port the child prints as `{"port":…}`, or rejects when it exits first. */
function printedPort(child: ChildProcess, stderr: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      out += chunk;
      const match = /\{"port":(\d+)\}/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${stderr().slice(0, 2000)}`)));
  });
}

/** Waits until `origin` answers `WORLD_PATH` (workerd says nothing when it listens). */
async function answering(origin: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before listening: ${stderr().slice(0, 2000)}`);
    try {
      const res = await fetch(new URL(WORLD_PATH, origin));
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${origin} did not answer within 60 s: ${stderr().slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts the conformance app under `name` (its binary from `findRuntime`). */
export async function startUnder(name: RuntimeName, binary: string): Promise<RunningApp> {
  const runtime = RUNTIMES[name];
  const dir = mkdtempSync(join(tmpdir(), `keyset-fetch-${name}-`));
  const file = await bundle(name, dir);
  const port = runtime.printsPort ? 0 : await freePort();
  const child = spawn(binary, runtime.args(file, dir, port), {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
  });
  let err = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const origin = `http://127.0.0.1:${runtime.printsPort ? await printedPort(child, () => err) : port}`;
    await answering(origin, child, () => err);
    return { world: await remoteWorld(origin), request: overHttp(origin), close: stop };
  } catch (error) {
    await stop();
    throw new Error(`${name} did not start the conformance server`, { cause: error });
  }
}
