/**
 * What a user installs, checked as a user would: every published package is packed with
 * `pnpm pack` (workspace ranges become real versions), the tarballs are installed with npm
 * into a scratch project outside the workspace (offline: nothing but the tarballs is
 * needed), and the project imports every package from ESM and from CommonJS and
 * type-checks a sample with tsc (`module: node16`, once as `.mts`, once as `.cts`). The
 * framework peers (hono, express, …) are linked from the workspace instead of downloaded.
 * Needs built packages (`npx -y pnpm@10.34.9 build`, which .ci/run does first).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

const published = readdirSync(join(root, 'packages'))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { name: string; private?: boolean } }))
  .filter(({ manifest }) => manifest.private !== true);

const unbuilt = published.filter(({ dir }) => !existsSync(join(root, 'packages', dir, 'dist', 'index.js'))).map(({ manifest }) => manifest.name);
if (unbuilt.length > 0) {
  const message = `${unbuilt.join(', ')} not built: run \`npx -y pnpm@10.34.9 build\` first`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the pack-and-install test: ${message}`);
}

/** Peers a user installs beside the adapters, linked from the workspace's node_modules. */
const PEERS = ['hono', 'express', 'fastify', 'ioredis', 'kysely', 'drizzle-orm', '@types/express', '@types/node'];

const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

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

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'keyset-pack-'));
    const tarballs = join(tmp, 'tarballs');
    mkdirSync(tarballs);
    for (const { dir } of published) run('npx', ['-y', 'pnpm@10.34.9', 'pack', '--pack-destination', tarballs], join(root, 'packages', dir));
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
    for (const peer of PEERS) {
      const target = join(app, 'node_modules', peer);
      mkdirSync(dirname(target), { recursive: true });
      if (!existsSync(target)) symlinkSync(join(root, 'node_modules', peer), target, 'dir');
    }
  }, 240_000);
  afterAll(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
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
});
