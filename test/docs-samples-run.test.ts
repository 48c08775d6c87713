/**
 * Every self-contained TypeScript sample of the docs runs as written (test/docs-samples.test.ts
 * and test/pack-install.test.ts type-check all of them; fragments that lean on the prose
 * around them, marked with a `ts-context` comment, are type-checked only). Each runs with
 * `node --import tsx` from the repository (the `@keyset/*` sources), with what a reader
 * has: `NODE_ENV=development`, `PORT=0`, a `CURSOR_SECRET`, `DATABASE_URL` and `REDIS_URL` of the test servers,
 * and for the client samples a running example API (its origin in place of
 * `127.0.0.1:3000` and `api.example.com`) and a key that reads orders in `KEY` / `API_KEY`.
 * A sample passes when it exits 0, or, for a server, when it prints its URL and a request
 * to that URL (with the key it prints) is answered below 500. The samples of the
 * published packages' READMEs run in a fresh project from the packed tarballs instead
 * (test/pack-install.test.ts), where their reader runs them; the three complete servers of
 * the READMEs also run here in both module systems (test/readme-sample.test.ts).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresUrl, redisUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type TestApi } from '../examples/orders-api/test/helpers.ts';
import { samples, type Sample } from './support/docs-samples.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, '.docs-run', String(process.pid));
const database = await postgresUrl();
const redis = await redisUrl();

/** The samples a reader can paste and run: no context from the prose, not run elsewhere. */
const runnable = samples().filter((s) => s.context.length === 0 && !s.file.startsWith('packages/') && s.file !== 'README.md');

interface Outcome {
  code: number | null;
  out: string;
  err: string;
  /** Status of the request to the URL a server printed. */
  served?: number;
}

/** Runs one sample until it exits, or until it prints a URL, which is then requested once. */
function run(sample: Sample, env: Record<string, string>, origin: string): Promise<Outcome> {
  const file = join(dir, `${sample.file.replace(/[^a-z0-9]+/gi, '_')}_L${sample.line}.mts`);
  writeFileSync(file, `${sample.code.replaceAll('http://127.0.0.1:3000', origin).replaceAll('https://api.example.com', origin)}\nexport {};\n`);
  const { NODE_ENV: _n, CURSOR_SECRET: _c, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...inherited, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'), NODE_ENV: 'development', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    let requested = false;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
    child.stdout.setEncoding('utf8').on('data', async (chunk: string) => {
      out += chunk;
      const url = /(http:\/\/127\.0\.0\.1:\d+[^\s'"]*)/.exec(out)?.[1];
      if (url === undefined || requested || url.startsWith(origin)) return;
      requested = true;
      const key = /ApiKey ([A-Za-z0-9_]+)/.exec(out)?.[1];
      const response = await fetch(url, key === undefined ? {} : { headers: { authorization: `ApiKey ${key}` } }).catch(() => undefined);
      child.kill('SIGTERM');
      resolve({ code: null, out, err, ...(response === undefined ? {} : { served: response.status }) });
    });
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

describe.skipIf(database === undefined || redis === undefined)('docs samples run as written', () => {
  let t: TestApi;
  let key: string;
  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    t = await startApi({ seedOrders: 250, rateLimit: { limit: 1_000_000, windowSeconds: 1 } });
    const issued = await call(t.api.url, '/api/keys', { method: 'POST', key: t.api.adminKey, body: { name: 'docs samples', scopes: ['orders:read', 'reports:read'] } });
    key = issued.body.key as string;
  }, 60_000);
  afterAll(async () => {
    await t?.stop({ remove: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('has samples to run', () => expect(runnable.length).toBeGreaterThan(10));

  it.each(runnable.map((s) => [`${s.file}:${s.line}`, s] as const))('%s', async (_where, sample) => {
    // A production sample refuses to start without CURSOR_SECRET, as the docs say: a reader sets it.
    const env = { DATABASE_URL: database!, REDIS_URL: redis!, KEY: key, API_KEY: key, CURSOR_SECRET: randomBytes(32).toString('base64') };
    const outcome = await run(sample, env, t.api.url);
    const report = `exit ${outcome.code}, stderr:\n${outcome.err.slice(-2000)}`;
    if (outcome.code === null) {
      expect(outcome.served, report).toBeDefined();
      expect(outcome.served!, report).toBeLessThan(500);
    } else {
      expect(outcome.code, report).toBe(0);
    }
  }, 60_000);
});
