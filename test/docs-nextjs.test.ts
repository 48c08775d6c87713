/**
 * docs/nextjs.md's recipe, built and served by Next.js itself: the page's `next-app`
 * files go into a new Next.js project with the packed keyset tarballs (installed by npm,
 * offline; next, react, pg and the type packages linked from the workspace), are
 * type-checked under strict settings and built with `next build` WITHOUT CURSOR_SECRET or
 * DATABASE_URL. Under `next start`, a request without CURSOR_SECRET fails with the
 * ConfigError naming it (no fallback secret); with the variables set, a key issued into
 * the PostgreSQL store reads a page whose `Link` starts with PUBLIC_BASE_URL. The same
 * files with the objects made at module scope fail the build, as the page says.
 * Needs built packages (`npx -y pnpm@10.34.9 build`) and PostgreSQL (TEST_DATABASE_URL).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKeyAdmin, createKeyring } from '@keyset/core';
import { createPostgresKeyStore, migrate } from '@keyset/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/own-redis.ts';
import { postgresUrl } from './support/services.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const NEEDED = ['core', 'fetch', 'postgres'];
/** Linked from the workspace's node_modules instead of downloaded. */
const LINKED = ['next', 'react', 'react-dom', 'pg', 'typescript', '@types/react', '@types/node', '@types/pg'];

const unbuilt = NEEDED.filter((dir) => !existsSync(join(root, 'packages', dir, 'dist', 'index.js')));
if (unbuilt.length > 0) {
  const message = `${unbuilt.map((d) => `@keyset/${d}`).join(', ')} not built: run \`npx -y pnpm@10.34.9 build\` first`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the Next.js recipe test: ${message}`);
}
const databaseUrl = unbuilt.length > 0 ? undefined : await postgresUrl();

/** The `next-app` files of docs/nextjs.md: path (from the first line's comment) → text. */
function recipeFiles(): Map<string, string> {
  const page = readFileSync(join(root, 'docs', 'nextjs.md'), 'utf8');
  const files = new Map<string, string>();
  for (const [, code] of page.matchAll(/^```ts next-app\n([\s\S]*?)^```/gm)) {
    const path = /^\/\/ (\S+)\n/.exec(code!)?.[1];
    if (path === undefined) throw new Error('a next-app block of docs/nextjs.md does not start with its path');
    files.set(path, code!);
  }
  return files;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, npm_config_update_notifier: 'false', NEXT_TELEMETRY_DISABLED: '1' } });

/** The environment without the recipe's variables. */
function bareEnv(): NodeJS.ProcessEnv {
  const { CURSOR_SECRET: _c, DATABASE_URL: _d, PUBLIC_BASE_URL: _p, NODE_ENV: _n, ...env } = process.env;
  return env;
}

/** `next start` on a free port; resolves once it says it is ready. */
async function nextStart(project: string, env: NodeJS.ProcessEnv): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(project, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: project,
    env: { ...env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (/Ready in/.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`next start exited with ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe.skipIf(databaseUrl === undefined)('docs/nextjs.md in a Next.js project', () => {
  const base = join(root, '.nextjs-check', String(process.pid));
  const database = `keyset_nextjs_${process.pid}`;
  let admin: pg.Client;
  let appDatabaseUrl: string;

  /** A Next.js project with `files` and keyset installed from the packed tarballs. */
  function project(name: string, files: Map<string, string>): string {
    // Inside the repository, so Next.js's root (found from the workspace's lockfile) holds
    // the linked packages too.
    const dir = join(base, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `recipe-${name}`, version: '1.0.0', private: true }));
    const tarballs = join(base, 'tarballs');
    const wanted = NEEDED.map((dir) => readdirSync(tarballs).find((f) => f.startsWith(`keyset-${dir}-`))).map((f) => join(tarballs, f!));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--ignore-scripts', ...wanted], dir);
    for (const name of LINKED) {
      const target = join(dir, 'node_modules', name);
      mkdirSync(dirname(target), { recursive: true });
      if (!existsSync(target)) symlinkSync(join(root, 'node_modules', name), target, 'dir');
    }
    // What a strict project has; Next.js adds its own settings to it on the first build.
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['dom', 'dom.iterable', 'esnext'],
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          module: 'esnext',
          moduleResolution: 'bundler',
          isolatedModules: true,
          jsx: 'react-jsx',
          skipLibCheck: true,
          plugins: [{ name: 'next' }],
        },
        include: ['next-env.d.ts', '**/*.ts', '**/*.tsx', '.next/types/**/*.ts'],
        exclude: ['node_modules'],
      }),
    );
    mkdirSync(join(dir, 'app'), { recursive: true });
    writeFileSync(join(dir, 'app', 'layout.tsx'), 'export default function RootLayout({ children }: { children: React.ReactNode }) {\n  return <html lang="en"><body>{children}</body></html>;\n}\n', { flag: 'w' });
    for (const [path, text] of files) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }

  beforeAll(async () => {
    rmSync(base, { recursive: true, force: true });
    mkdirSync(join(base, 'tarballs'), { recursive: true });
    for (const dir of NEEDED) run('npx', ['-y', 'pnpm@10.34.9', 'pack', '--pack-destination', join(base, 'tarballs')], join(root, 'packages', dir));
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database}`);
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(databaseUrl!);
    url.pathname = `/${database}`;
    appDatabaseUrl = url.href;
  }, 120_000);

  afterAll(async () => {
    rmSync(base, { recursive: true, force: true });
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  it('the page has the two files of the recipe', () => {
    expect([...recipeFiles().keys()].sort()).toEqual(['app/api/orders/route.ts', 'lib/keyset.ts']);
    expect(recipeFiles().get('lib/keyset.ts')).not.toMatch(/CURSOR_SECRET \?\?/);
  });

  it('builds without CURSOR_SECRET or DATABASE_URL, then fails closed without the secret and serves pages with it', async () => {
    const dir = project('recipe', recipeFiles());
    // Type-checked by tsc under the project's strict settings, then built by Next.js.
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit'], dir);
    const build = run(process.execPath, [join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], dir, bareEnv());
    expect(build).toMatch(/ƒ \/api\/orders/);

    // Keys in the store the recipe reads.
    const setup = new pg.Pool({ connectionString: appDatabaseUrl });
    await migrate(setup);
    const keyring = createKeyring({ store: createPostgresKeyStore({ client: setup }), prefix: 'acme_live' });
    const { key } = await createKeyAdmin(keyring).issue({ name: 'next', scopes: ['orders:read'] });
    await keyring.close();
    await setup.end();
    const headers = { authorization: `ApiKey ${key}` };

    // No CURSOR_SECRET: the first request fails, and the log says what to set.
    const unset = await nextStart(dir, { ...bareEnv(), DATABASE_URL: appDatabaseUrl });
    try {
      const response = await fetch(`${unset.url}/api/orders?limit=2`, { headers });
      expect(response.status).toBe(500);
      await response.arrayBuffer();
      expect(unset.output()).toMatch(/ConfigError\]?: CURSOR_SECRET is not set/);
    } finally {
      await unset.stop();
    }

    const served = await nextStart(dir, { ...bareEnv(), DATABASE_URL: appDatabaseUrl, CURSOR_SECRET: randomBytes(32).toString('base64'), PUBLIC_BASE_URL: 'https://api.example.test' });
    try {
      const first = await fetch(`${served.url}/api/orders?limit=2`, { headers });
      expect(first.status).toBe(200);
      const page = (await first.json()) as { items: Array<{ id: number }>; nextCursor: string };
      expect(page.items.map((o) => o.id)).toEqual([50, 49]);
      expect(first.headers.get('link')).toMatch(/^<https:\/\/api\.example\.test\/api\/orders\?limit=2&cursor=[^>]+>; rel="next"/);
      const second = (await (await fetch(`${served.url}/api/orders?limit=2&cursor=${page.nextCursor}`, { headers })).json()) as { items: Array<{ id: number }> };
      expect(second.items.map((o) => o.id)).toEqual([48, 47]);
      expect((await fetch(`${served.url}/api/orders`)).status).toBe(401);
    } finally {
      await served.stop();
    }

    // Without PUBLIC_BASE_URL, `Link` has the origin Next.js gives the request, which is
    // not the one the client used: why the page says to set it.
    const plain = await nextStart(dir, { ...bareEnv(), DATABASE_URL: appDatabaseUrl, CURSOR_SECRET: randomBytes(32).toString('base64') });
    try {
      const response = await fetch(`${plain.url}/api/orders?limit=2`, { headers });
      await response.arrayBuffer();
      expect(response.headers.get('link')).toMatch(/^<http:\/\/localhost:\d+\/api\/orders\?/);
    } finally {
      await plain.stop();
    }
  }, 300_000);

  it('made at module scope instead, the same files fail `next build` without CURSOR_SECRET', () => {
    const files = recipeFiles();
    // What the page warns against: keyset's objects made when the module loads.
    files.set('app/api/orders/route.ts', `${files.get('app/api/orders/route.ts')!}\ngetKeyset();\n`);
    const dir = project('module-scope', files);
    let output = '';
    try {
      run(process.execPath, [join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], dir, bareEnv());
    } catch (error) {
      output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
    }
    expect(output).toMatch(/Failed to collect page data for \/api\/orders/);
    expect(output).toMatch(/CURSOR_SECRET is not set/);
  }, 300_000);
});
