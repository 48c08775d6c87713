/**
 * What a user installs, checked as a user would: the published packages are packed with
 * the command docs/getting-started.md gives ("install from a local pack": `pack:fresh`, a
 * build-only install and then `pack:all`, whose `pnpm pack` turns workspace ranges into
 * real versions), which must yield every published package and not the private conformance
 * suite, and print the `npm install` line; the tarballs are installed with npm into scratch
 * projects outside the workspace, which import every package from ESM and from CommonJS,
 * type-check a sample with tsc (`module: node16`, once as `.mts`, once as `.cts`), serve
 * the README's "Using it" server in a plain `npm init -y` project, install
 * `@keyset/kysely` beside kysely 0.28 (the line npm picks on Node 20) with npm's peer and
 * engine checks on (offline: the framework peers are linked or packed from the workspace),
 * and type-check an Express + @keyset/redis project with strict tsc and no skipLibCheck.
 * Then every sample of the published packages' READMEs runs as written in one project made
 * exactly as the guide says, after the READMEs' own `npm install` lines.
 * Needs built packages (`npx -y pnpm@10.34.9 build`, which .ci/run does first).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { postgresUrl, redisUrl } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createDatabase, dropDatabase, startApi, type TestApi } from '../examples/orders-api/test/helpers.ts';
import { filesToWrite, importsRelative, npmInstalls, publishedReadmes, samples, shellSteps, type Sample } from './support/docs-samples.ts';
import { readmeUsingIt } from './support/readme-sample.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const manifests = readdirSync(join(root, 'packages')).map((dir) => ({
  dir,
  manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { name: string; version: string; private?: boolean },
}));
const published = manifests.filter(({ manifest }) => manifest.private !== true);
/** The private packages (the conformance suite): never packed for users. */
const privateNames = manifests.filter(({ manifest }) => manifest.private === true).map(({ manifest }) => manifest.name);

const unbuilt = published.filter(({ dir }) => !existsSync(join(root, 'packages', dir, 'dist', 'index.js'))).map(({ manifest }) => manifest.name);
if (unbuilt.length > 0) {
  const message = `${unbuilt.join(', ')} not built: run \`npx -y pnpm@10.34.9 build\` first`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the pack-and-install test: ${message}`);
}

const database = unbuilt.length > 0 ? undefined : await postgresUrl();
const redis = unbuilt.length > 0 ? undefined : await redisUrl();

/** Peers a user installs beside the adapters, linked from the workspace's node_modules. */
const PEERS = ['hono', 'express', 'fastify', 'ioredis', 'kysely', 'drizzle-orm', 'graphql', '@opentelemetry/api', '@types/express', '@types/node'];
/** What the docs samples import besides keyset and the peers, linked the same way. */
const SAMPLE_IMPORTS = ['@apollo/server', '@electric-sql/pglite', '@hono/node-server', 'graphql-yoga', '@pothos/core', '@pothos/plugin-relay', '@opentelemetry/context-async-hooks', '@opentelemetry/sdk-metrics', '@opentelemetry/sdk-trace-base', 'got', 'mysql2', 'pg', '@types/pg', 'pino'];

const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

/**
 * The pack command docs/getting-started.md leads "Before keyset is on npm" with
 * (`pack:fresh`: the build-only install, then `pack:all`), and what `pack:all` runs after
 * the build: the packing step, as arguments.
 */
function documentedPackCommand(): string[] {
  const guide = readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Before keyset is on npm'));
  const first = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  if (!first.includes('npx -y pnpm@10.34.9 pack:fresh')) throw new Error('docs/getting-started.md does not lead "Before keyset is on npm" with `npx -y pnpm@10.34.9 pack:fresh`');
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  // pack:fresh installs the build toolchain, then runs pack:all (test/pack-fresh.test.ts).
  expect(scripts['pack:fresh']).toBe('node scripts/pack-fresh.mjs');
  // The build is the repository's `build` script (checked by every test that needs dist/);
  // this test needs built packages already and must not rebuild dist/ under other tests.
  const [build, pack] = (scripts['pack:all'] ?? '').split(' && ');
  expect(build).toBe('pnpm build');
  return pack!.split(' ');
}

/** Links a package from the workspace's node_modules into a scratch project's. */
function linkFromWorkspace(app: string, name: string): void {
  const target = join(app, 'node_modules', name);
  mkdirSync(dirname(target), { recursive: true });
  if (!existsSync(target)) symlinkSync(join(root, 'node_modules', name), target, 'dir');
}

/** A scratch project as `npm init -y` makes it (CommonJS), named `name`, in `dir`. */
function npmInit(dir: string): void {
  mkdirSync(dir, { recursive: true });
  run('npm', ['init', '-y'], dir);
}

const SAMPLE = `import { createKeyring, createMemoryKeyStore, createPaginator, cursorSecrets, ERROR_CATALOGUE, type KeyRecord } from '@keyset/core';
import { paginate as walk } from '@keyset/client';
import { apiKey as honoApiKey, notFoundHandler } from '@keyset/hono';
import { apiKey as expressApiKey } from '@keyset/express';
import { keyset as fastifyPlugin } from '@keyset/fastify';
import { apiKey as fetchApiKey } from '@keyset/fetch';
import { keysetComponents } from '@keyset/openapi';
import { createPostgresKeyStore } from '@keyset/postgres';

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live' });
const paginator = createPaginator<{ id: number }>({
  endpoint: 'GET /things',
  sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }],
  cursor: { secrets: cursorSecrets(undefined, { development: true }) },
});
const status: number = ERROR_CATALOGUE.rate_limited.status;
const record: KeyRecord | undefined = undefined;
export const used = [keyring, paginator, status, record, walk, honoApiKey, notFoundHandler, expressApiKey, fastifyPlugin, fetchApiKey, keysetComponents, createPostgresKeyStore];
`;

describe.skipIf(unbuilt.length > 0)('packed tarballs installed into a project outside the workspace', () => {
  let tmp: string;
  let app: string;
  let tarballs: string;
  /** What the documented pack command wrote, and what it printed. */
  let packed: string[] = [];
  let printed = '';
  const tarball = (name: string): string => join(tarballs, `${name.replace('@', '').replace('/', '-')}-${manifests.find((m) => m.manifest.name === name)?.manifest.version ?? '0.1.0'}.tgz`);

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'keyset-pack-'));
    tarballs = join(tmp, 'tarballs');
    mkdirSync(tarballs);
    const [command, ...args] = documentedPackCommand();
    expect(command).toBe('node');
    printed = run(process.execPath, [...args, tarballs], root);
    packed = readdirSync(tarballs).sort();
    // Third-party runtime dependencies (fastify-plugin): packed from the workspace's copy, so
    // the offline install needs no registry.
    for (const { dir, manifest } of published) {
      for (const dep of Object.keys((manifest as { dependencies?: Record<string, string> }).dependencies ?? {})) {
        if (!dep.startsWith('@keyset/')) run('npm', ['pack', '--pack-destination', tarballs, realpathSync(join(root, 'packages', dir, 'node_modules', dep))], tmp);
      }
    }
    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }));
    const files = readdirSync(tarballs).map((f) => join(tarballs, f));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--legacy-peer-deps', '--ignore-scripts', ...files], app);
    for (const peer of PEERS) linkFromWorkspace(app, peer);
  }, 240_000);
  afterAll(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  }, 120_000);

  it('the documented pack command packs every published package, and not the private ones', () => {
    expect(packed).toEqual(published.map(({ manifest }) => tarball(manifest.name).slice(tarballs.length + 1)).sort());
    expect(privateNames.length).toBeGreaterThan(0);
    for (const name of privateNames) expect(packed).not.toContain(tarball(name).slice(tarballs.length + 1));
  });

  it('the documented pack command prints the `npm install` line naming every tarball by its absolute path', () => {
    const line = printed.split('\n').find((l) => l.startsWith('npm install '));
    expect(line).toBeDefined();
    expect(line!.slice('npm install '.length).split(' ').sort()).toEqual(published.map(({ manifest }) => tarball(manifest.name)).sort());
  });

  it('installs every package with its LICENSE and without test code', () => {
    for (const { manifest } of published) {
      const dir = join(app, 'node_modules', manifest.name);
      expect(existsSync(join(dir, 'LICENSE')), manifest.name).toBe(true);
      const listed = run('find', ['.', '-name', '*.test.ts', '-o', '-name', '*.contract.ts', '-o', '-path', '*/testing/*'], dir);
      expect(listed.trim(), manifest.name).toBe('');
    }
  });

  it.each(published.map(({ manifest }) => manifest.name))('imports %s from ESM and from CommonJS', (name) => {
    const esm = run('node', ['--input-type=module', '-e', `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m)))`], app);
    const cjs = run('node', ['-e', `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(name)}))))`], app);
    const esmNames = JSON.parse(esm) as string[];
    expect(esmNames.length).toBeGreaterThan(0);
    expect((JSON.parse(cjs) as string[]).filter((n) => n !== 'default').sort()).toEqual(esmNames.filter((n) => n !== 'default').sort());
  });

  it('works at run time from both module systems: a key verifies and a page is signed', () => {
    const script = (load: string): string => `${load}
const keyring = core.createKeyring({ store: core.createMemoryKeyStore(), prefix: 'acme_live' });
const guard = core.createApiKeyGuard({ keyring });
const { key } = await core.createKeyAdmin(keyring).issue({ name: 'demo', scopes: ['read'] });
const verified = await guard.check({ authorization: 'ApiKey ' + key, url: 'https://x.test/things' }, { scopes: ['read'] });
const paginator = core.createPaginator({ endpoint: 'GET /things', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], cursor: { secrets: core.cursorSecrets(undefined, { development: true }) } });
const plan = await paginator.plan(new URLSearchParams('limit=1'));
const { body } = await paginator.page(plan, [{ id: 1 }, { id: 2 }], { url: 'https://x.test/things?limit=1' });
console.log(verified.key.name, body.items.length, typeof body.nextCursor);`;
    expect(run('node', ['--input-type=module', '-e', script("import * as core from '@keyset/core';")], app).trim()).toBe('demo 1 string');
    expect(run('node', ['-e', `(async () => { ${script("const core = require('@keyset/core');")} })()`], app).trim()).toBe('demo 1 string');
  });

  it('type-checks a sample with tsc (node16 resolution), as ESM and as CommonJS', () => {
    writeFileSync(join(app, 'sample.mts'), SAMPLE);
    writeFileSync(join(app, 'sample.cts'), SAMPLE);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], lib: ['es2023', 'dom'] },
        files: ['sample.mts', 'sample.cts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      output = run('node', [tsc, '-p', 'tsconfig.json'], app);
    } catch (error) {
      output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}` || String(error);
    }
    expect(output).toBe('');
    // The same check refuses a sample that misuses the installed types (declaration files
    // were checked above; skipping them here halves the time).
    writeFileSync(join(app, 'sample.mts'), `${SAMPLE}\nexport const wrong: number = ERROR_CATALOGUE.rate_limited.title;\n`);
    let refused = '';
    try {
      run('node', [tsc, '-p', 'tsconfig.json', '--skipLibCheck'], app);
    } catch (error) {
      refused = (error as { stdout?: string }).stdout ?? '';
    }
    expect(refused).toMatch(/sample\.mts.*error TS2322/);
  }, 300_000);

  it('type-checks every docs sample against the installed packages, as a user\'s ESM files', () => {
    // The private conformance kit is not published: its README's sample is for this repo.
    // A sample importing a module of the reader's project (the Prisma client its README
    // generates) is type-checked in the project where that step ran (below).
    const all = samples().filter((sample) => !sample.file.startsWith('packages/conformance/') && !importsRelative(sample.code));
    expect(all.length).toBeGreaterThan(40);
    for (const peer of SAMPLE_IMPORTS) linkFromWorkspace(app, peer);
    const dir = join(app, 'samples');
    mkdirSync(dir, { recursive: true });
    const names = all.map((sample, i) => {
      const name = `${sample.file.replace(/[^a-z0-9]+/gi, '_')}_L${sample.line}_${i}.mts`;
      // The context on the sample's first line keeps error line numbers the sample's own.
      writeFileSync(join(dir, name), `${sample.context.join(' ')}${sample.code}\nexport {};\n`);
      return name;
    });
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], lib: ['es2023', 'dom'] },
        include: ['./*.mts'],
      }),
    );
    let output = '';
    try {
      run('node', [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], dir);
    } catch (error) {
      output = (error as { stdout?: string }).stdout ?? String(error);
    }
    const errors = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const m = /^(.+?\.mts)\((\d+),\d+\): (.*)$/.exec(line);
        const sample = m === null ? undefined : all[names.indexOf(m[1]!)];
        return sample === undefined ? line : `${sample.file}:${sample.line + Number(m![2]) - 1}: ${m![3]}`;
      });
    expect(errors).toEqual([]);
  }, 300_000);

  it('type-checks an Express + @keyset/redis project with strict tsc and no skipLibCheck, given the dev dependency the redis README installs', () => {
    // The README's install block names the types package ioredis's declarations need.
    const readme = readFileSync(join(root, 'packages', 'redis', 'README.md'), 'utf8');
    const install = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(install).toContain('npm install @keyset/redis @keyset/core ioredis');
    expect(install).toContain('npm install --save-dev @types/redis-errors');
    // ioredis and redis-errors copied, as npm installs them, not linked: a link's real path
    // is in the workspace, where TypeScript would find the workspace's own @types.
    const project = join(app, 'express-redis');
    npmInit(project);
    const copy = (name: string): void => cpSync(realpathSync(join(root, 'node_modules', name)), join(project, 'node_modules', name), { recursive: true });
    copy('ioredis');
    // ioredis's own dependencies, beside it in pnpm's store.
    const ioredis = realpathSync(join(root, 'node_modules', 'ioredis'));
    const { dependencies } = JSON.parse(readFileSync(join(ioredis, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(dependencies)).toContain('redis-errors');
    for (const name of Object.keys(dependencies)) cpSync(realpathSync(join(ioredis, '..', name)), join(project, 'node_modules', name), { recursive: true });
    writeFileSync(
      join(project, 'server.ts'),
      `import { createApiKeyGuard, createKeyring, createMemoryKeyStore, createRateLimiter } from '@keyset/core';
import { apiKey } from '@keyset/express';
import { createRedisRateLimitStore, createRevocationBus } from '@keyset/redis';
import express from 'express';
import { Redis } from 'ioredis';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live' });
const limiter = createRateLimiter({ store: createRedisRateLimitStore({ redis }), defaultPolicy: { limit: 100, windowSeconds: 60 } });
export const bus = createRevocationBus({ publisher: redis, subscriber: redis.duplicate(), keyring });
const app = express();
app.get('/orders', apiKey({ guard: createApiKeyGuard({ keyring, limiter }), scopes: ['orders:read'] }), (_req, res) => {
  res.json({ caller: res.locals.apiKey.name });
});
export default app;
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, esModuleInterop: true, skipLibCheck: false, noEmit: true, types: ['node'] }, files: ['server.ts'] }),
    );
    const tsc = (): string => {
      try {
        return run('node', [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], project);
      } catch (error) {
        return (error as { stdout?: string }).stdout ?? String(error);
      }
    };
    // Without the line: the error is inside ioredis, not in the project or in keyset.
    const without = tsc();
    expect(without).toMatch(/^node_modules\/ioredis\/built\/.*error TS7016: Could not find a declaration file for module 'redis-errors'/m);
    expect(without).not.toMatch(/^(?!node_modules\/ioredis\/).*error TS/m);
    copy('@types/redis-errors');
    expect(tsc()).toBe('');
  }, 120_000);

  /**
   * Packs a package of the workspace's node_modules (as installed) into the tarball folder,
   * from a copy without its `packageManager` field: npm 11 refuses to pack a folder that
   * names another package manager there ("Exit handler never called"), as hono and kysely do.
   */
  const packFromWorkspace = (dir: string): string => {
    const stage = mkdtempSync(join(tmp, 'stage-'));
    cpSync(realpathSync(dir), stage, { recursive: true, filter: (from) => !from.includes('/node_modules/', realpathSync(dir).length) });
    const manifest = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8')) as Record<string, unknown>;
    delete manifest.packageManager;
    writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2));
    return join(tarballs, run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs], stage).trim().split('\n').pop()!);
  };

  it('serves the README\'s "Using it" server as written, in a plain `npm init -y` project', async () => {
    const project = join(tmp, 'readme-sample');
    npmInit(project);
    const hono = packFromWorkspace(join(root, 'node_modules', 'hono'));
    const nodeServer = packFromWorkspace(join(root, 'node_modules', '@hono', 'node-server'));
    // npm's peer checks on: @keyset/hono's hono peer is met by the hono installed beside it.
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball('@keyset/core'), tarball('@keyset/hono'), hono, nodeServer], project);
    linkFromWorkspace(project, 'tsx');
    expect((JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs').toBe('commonjs');
    writeFileSync(join(project, 'server.ts'), readmeUsingIt());
    const { NODE_ENV: _n, CURSOR_SECRET: _c, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], { cwd: project, env: { ...env, PORT: '0', NODE_ENV: 'development' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('curl ')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the sample exited with ${code}: ${err}`)));
      });
      const base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      const key = /ApiKey (acme_live_[0-9A-Za-z]+)/.exec(out)?.[1];
      const response = await fetch(`${base}/orders?limit=2`, { headers: { authorization: `ApiKey ${key}` } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { items: Array<{ id: number }> }).items.map((o) => o.id)).toEqual([250, 249]);
    } finally {
      child.kill('SIGTERM');
    }
  }, 120_000);

  it('installs @keyset/kysely beside kysely 0.28 (what npm picks on Node 20), with npm\'s peer and engine checks on', () => {
    const project = join(tmp, 'kysely-028');
    npmInit(project);
    const kysely = packFromWorkspace(join(root, 'packages', 'kysely', 'node_modules', 'kysely-028'));
    expect(kysely).toMatch(/kysely-0\.28\.\d+\.tgz$/);
    // No --legacy-peer-deps: with a peer range of ^0.29.0 this was ERESOLVE. --engine-strict
    // turns an EBADENGINE warning (kysely 0.29 on Node 20) into the failure it hides.
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--engine-strict', tarball('@keyset/core'), tarball('@keyset/kysely'), kysely], project);
    const tree = JSON.parse(run('npm', ['ls', '--all', '--json'], project)) as { dependencies: Record<string, { version: string }> };
    expect(tree.dependencies.kysely?.version).toMatch(/^0\.28\./);
    const script = `
const { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } = require('kysely');
const { createPaginator, cursorSecrets } = require('@keyset/core');
const { keysetPage } = require('@keyset/kysely');
const db = new Kysely({ dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new SqliteIntrospector(k), createQueryCompiler: () => new SqliteQueryCompiler() } });
const orders = createPaginator({ endpoint: 'GET /orders', sort: [{ key: 'id', dir: 'desc', type: 'int', unique: true }], cursor: { secrets: cursorSecrets(undefined, { development: true }) } });
(async () => {
  const plan = await orders.plan(new URLSearchParams('limit=2'));
  console.log(keysetPage(db.selectFrom('orders').selectAll(), plan, plan.sort, 'sqlite').compile().sql);
})();`;
    expect(run('node', ['-e', script], project).trim()).toBe('select * from "orders" order by "id" DESC limit ?');
  }, 120_000);
  /**
   * Every TypeScript sample of the published packages' READMEs, in one project made as
   * docs/getting-started.md makes it (its commands run as written, with this run's tarball
   * folder for `../keyset/.packs`), after every `npm install` line of those READMEs (one
   * npm run, the `@keyset/*` names pointing at the tarballs; the rest from the registry,
   * or npm's cache). Each sample runs with `npx tsx`, as the READMEs say, with what a reader
   * has: `NODE_ENV=development`, `PORT=0`, a `CURSOR_SECRET` and `KEY_PEPPER`, a
   * `DATABASE_URL` whose `orders` table the query-builder samples read, `REDIS_URL`, and
   * for the client samples a running example API (its origin for `https://api.example.com`)
   * and a key in `API_KEY`. A server must answer two pages to the key it prints, a route
   * module a request without a key with a 401 problem; anything else must exit 0.
   */
  describe.skipIf(database === undefined || redis === undefined)('package README samples, in the project docs/getting-started.md makes', () => {
    const readmeSamples = publishedReadmes().flatMap((file) => samples().filter((sample) => sample.file === file));
    let project: string;
    let api: TestApi;
    let apiKey: string;
    let databaseName: string;
    let databaseUrl: string;
    /** npm as a reader runs it: the registry for what the cache lacks, no audit or funding lines. */
    const npmEnv = (): NodeJS.ProcessEnv => ({
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_config_'))),
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    });

    beforeAll(async () => {
      const guide = readFileSync(join(root, 'docs', 'getting-started.md'), 'utf8');
      const block = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('npm init -y'));
      expect(block, 'docs/getting-started.md has no sh block with `npm init -y`').toBeDefined();
      const guideDir = join(tmp, 'guide');
      mkdirSync(guideDir);
      execFileSync('sh', ['-e', '-c', block!.replaceAll('../keyset/.packs/', `${tarballs}/`)], { cwd: guideDir, stdio: ['ignore', 'pipe', 'pipe'], env: npmEnv() });
      project = join(guideDir, /mkdir (\S+)/.exec(block!)![1]!);
      const wanted = [...new Set(publishedReadmes().flatMap(npmInstalls))].map((name) => (name.startsWith('@keyset/') ? tarball(name) : name));
      execFileSync('npm', ['install', ...wanted], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], env: npmEnv() });
      // Then what the READMEs have their reader write (`// prisma/schema.prisma`) and run in
      // the project (`npx prisma generate`), as written, in README order.
      for (const file of publishedReadmes()) {
        for (const { path, content } of filesToWrite(file)) {
          mkdirSync(dirname(join(project, path)), { recursive: true });
          writeFileSync(join(project, path), content);
        }
        for (const step of shellSteps(file)) {
          // The Prisma CLI looks for its schema engine before any command and downloads it
          // when absent, which fails on this offline machine. Generating never runs that
          // engine, so any existing file stands in (packages/prisma/scripts/generate.mjs);
          // a reader online needs nothing.
          execFileSync('sh', ['-e', '-c', step], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], env: { ...npmEnv(), PRISMA_SCHEMA_ENGINE_BINARY: join(project, 'package.json') } });
        }
      }

      databaseName = `keyset_readme_${process.pid}_${randomBytes(3).toString('hex')}`;
      databaseUrl = await createDatabase(database!, databaseName);
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        // The table the Kysely and Drizzle samples read: microsecond timestamps, half of them paid.
        await client.query(`CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, status text NOT NULL, amount_cents integer NOT NULL);
          INSERT INTO orders SELECT i, timestamptz '2025-01-01' + i * interval '1.000123 second', CASE WHEN i % 2 = 0 THEN 'paid' ELSE 'pending' END, 100 + i FROM generate_series(1, 60) AS i;`);
      } finally {
        await client.end();
      }
      api = await startApi({ seedOrders: 250, rateLimit: { limit: 1_000_000, windowSeconds: 1 } });
      const issued = await call(api.api.url, '/api/keys', { method: 'POST', key: api.api.adminKey, body: { name: 'readme samples', scopes: ['orders:read'] } });
      apiKey = issued.body.key as string;
    }, 300_000);
    afterAll(async () => {
      await api?.stop({ remove: true });
      if (databaseName !== undefined) await dropDatabase(database!, databaseName);
    }, 120_000);

    it('the guide makes an ES module project from the tarballs', () => {
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type?: string; dependencies: Record<string, string> };
      expect(manifest.type).toBe('module');
      expect(manifest.dependencies['@keyset/core']).toMatch(/^file:/);
    });

    interface Run {
      code: number | null;
      out: string;
      err: string;
      stop(): void;
    }
    /** Runs `npx tsx <file>` in the project until it exits, or until `until(stdout)` holds (the caller stops it then). */
    const tsx = (file: string, until: (out: string) => boolean = () => false): Promise<Run> => {
      const { NODE_ENV: _n, CURSOR_SECRET: _c, ...env } = npmEnv();
      const child = spawn('npx', ['tsx', file], {
        cwd: project,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...env, NODE_ENV: 'development', PORT: '0', CURSOR_SECRET: randomBytes(32).toString('base64'), KEY_PEPPER: randomBytes(32).toString('base64'), DATABASE_URL: databaseUrl, REDIS_URL: redis!, API_KEY: apiKey },
      });
      let out = '';
      let err = '';
      // The group: npx, tsx and the sample.
      const stop = (): void => {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      };
      return new Promise((resolve) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (until(out)) resolve({ code: null, out, err, stop });
        });
        child.once('close', (code) => resolve({ code, out, err, stop }));
      });
    };

    it.each(readmeSamples.map((sample) => [`${sample.file}:${sample.line}`, sample] as const))('%s runs as written', async (_where, sample: Sample) => {
      const name = `${sample.file.split('/')[1]}-L${sample.line}.ts`;
      writeFileSync(join(project, name), sample.code.replaceAll('https://api.example.com', api.api.url));
      if (importsRelative(sample.code)) {
        // Left out of the type-checks above: its imports exist only here, once its README's steps ran.
        const tsc = [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--pretty', 'false', '--strict', '--skipLibCheck', '--module', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', '--typeRoots', join(root, 'node_modules', '@types'), '--types', 'node', name];
        let output = '';
        try {
          run(process.execPath, tsc, project);
        } catch (error) {
          output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}` || String(error);
        }
        expect(output).toBe('');
      }
      if (/^export const GET\b/m.test(sample.code)) {
        // A route module: Next.js imports it and calls GET with the request.
        writeFileSync(join(project, `drive-${name}`), `import { GET } from './${name}';\nconst response = await GET(new Request('http://127.0.0.1/api/orders?limit=2'));\nconsole.log(response.status, response.headers.get('content-type'));\n`);
        const outcome = await tsx(`drive-${name}`);
        expect(outcome.code, outcome.err).toBe(0);
        expect(outcome.out.trim()).toBe('401 application/problem+json');
        return;
      }
      const server = /curl -H 'Authorization: ApiKey (\S+)' '(http:\/\/127\.0\.0\.1:\d+)\//;
      const outcome = await tsx(name, (out) => server.test(out));
      if (outcome.code !== null) {
        expect(outcome.code, `${outcome.out}\n${outcome.err.slice(-3000)}`).toBe(0);
        return;
      }
      try {
        const [, key, base] = server.exec(outcome.out)!;
        const headers = { authorization: `ApiKey ${key}` };
        const first = await fetch(`${base}/orders?limit=2`, { headers });
        expect(first.status).toBe(200);
        const page = (await first.json()) as { items: unknown[]; nextCursor: string };
        expect(page.items).toHaveLength(2);
        const second = await fetch(`${base}/orders?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`, { headers });
        expect(second.status).toBe(200);
        expect(((await second.json()) as { items: unknown[] }).items).toHaveLength(2);
      } finally {
        outcome.stop();
      }
    }, 120_000);
  });
});
