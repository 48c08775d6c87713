/**
 * The README's "Using it" file and the complete servers that open the Hono and Express
 * READMEs, each run as a reader would run it (`npx tsx server.ts`, here
 * `node --import tsx`), in a project of each module system: a plain `npm init -y` one
 * (`"type": "commonjs"`, where a top-level `await` fails) and a `"type": "module"` one. It
 * serves, prints a key, the key reads a page of the rows, and the cursor leads to the next
 * page. Without a cursor secret outside development it refuses to start with a message
 * naming CURSOR_SECRET. Here `@keyset/*` resolve to the workspace's sources;
 * `test/pack-install.test.ts` runs the same file from the packed tarballs.
 * (`test/docs-samples.test.ts` type-checks it.)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { packageReadmeServer, readmeUsingIt } from './support/readme-sample.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Started {
  out: string;
  err: string;
  code: number | null;
  stop(): void;
}

/** Runs the sample `file` until `until(stdout)` holds or it exits. */
function run(file: string, env: Record<string, string>, until: (out: string) => boolean): Promise<Started> {
  const { NODE_ENV: _n, CURSOR_SECRET: _c, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    const done = (code: number | null): void => resolve({ out, err, code, stop: () => child.kill('SIGTERM') });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (until(out)) done(null);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
    child.once('close', (code) => done(code));
  });
}

/** Each complete server a reader may paste: the README's "Using it" and the Hono and Express READMEs' servers. */
const SAMPLES = [
  { name: 'README "Using it"', source: readmeUsingIt },
  { name: 'packages/hono/README.md', source: () => packageReadmeServer('hono') },
  { name: 'packages/express/README.md', source: () => packageReadmeServer('express') },
] as const;
const CASES = SAMPLES.flatMap((sample) => (['commonjs', 'module'] as const).map((type) => ({ ...sample, type })));

describe.each(CASES)('$name in a "type": "$type" project', ({ name, source, type }) => {
  const dir = join(root, '.readme-sample', `${name.replace(/[^A-Za-z]+/g, '-')}-${type}-${process.pid}`);
  const file = join(dir, 'server.ts');
  mkdirSync(dir, { recursive: true });
  // What `npm init -y` writes (npm 11 spells out the CommonJS default), or "type": "module".
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-sample', version: '1.0.0', main: 'index.js', license: 'ISC', type }, null, 2));
  writeFileSync(file, source());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves, issues a key, and pages through the rows with it', async () => {
    const server = await run(file, { PORT: '0', NODE_ENV: 'development' }, (out) => out.includes('curl '));
    try {
      expect(server.code, server.err).toBeNull();
      const base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(server.out)?.[1];
      const key = /ApiKey (acme_live_[0-9A-Za-z]+)/.exec(server.out)?.[1];
      expect(base).toBeDefined();
      expect(key).toBeDefined();
      const headers = { authorization: `ApiKey ${key}` };
      const first = await fetch(`${base}/orders?limit=2`, { headers });
      expect(first.status).toBe(200);
      const page = (await first.json()) as { items: Array<{ id: number; createdAt: string }>; nextCursor: string };
      // Newest first, the tie on createdAt broken by id descending.
      expect(page.items.map((o) => o.id)).toEqual([250, 249]);
      const second = (await (await fetch(`${base}/orders?limit=2&cursor=${page.nextCursor}`, { headers })).json()) as { items: Array<{ id: number }> };
      expect(second.items.map((o) => o.id)).toEqual([248, 247]);
      expect((await fetch(`${base}/orders`)).status).toBe(401);
      expect((await fetch(`${base}/orders`, { method: 'POST', headers })).status).toBe(405);
    } finally {
      server.stop();
    }
  }, 60_000);

  it('refuses to start without CURSOR_SECRET outside development, saying what to set', async () => {
    const server = await run(file, { PORT: '0' }, () => false);
    expect(server.code).not.toBe(0);
    expect(server.err).toMatch(/ConfigError: CURSOR_SECRET is not set/);
    expect(server.out).not.toContain('listening');
  }, 60_000);
});
