/**
 * The key CLI: usage errors without touching a database, the full command set on
 * the embedded PGlite data directory, and the refusal (exit 3) while a server holds it,
 * checked from a separate process as an operator would hit it.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { copyPgliteDataDir } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELP, runCli } from '../src/cli.ts';
import { lockDataDir } from '../src/data-dir.ts';
import { tempDir } from './helpers.ts';

const EXAMPLE = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { env, out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

describe('key CLI', () => {
  const dataDir = tempDir('orders-cli-');
  beforeAll(() => copyPgliteDataDir(join(dataDir, 'pgdata')));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints help with --help (exit 0) and with no arguments (exit 2)', async () => {
    expect(await cli(['--help'])).toMatchObject({ code: 0, out: HELP });
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('Usage: npx -y pnpm@10.34.9 keys');
  });

  it.each([
    [['frobnicate'], /unknown command/],
    [['create', '--name', 'x'], /--scopes/],
    [['create', '--scopes', 'orders:read'], /--name/],
    [['create', '--name', 'x', '--scopes', 'orders:write'], /unknown scope/],
    [['create', '--name', 'x', '--scopes', 'orders:read', '--rate', 'fast'], /--rate/],
    [['create', '--name', 'x', '--scopes', 'orders:read', '--expires', 'tomorrow'], /expiresAt/],
    [['create', '--name', 'x', '--scopes', 'orders:read', '--quota', 'lots'], /--quota/],
    [['create', '--name', 'x', '--scopes', 'orders:read', '--quota', '5', '--refill', '5/weekly'], /--refill/],
    [['create', '--name', 'x', '--scopes', 'orders:read', '--refill', '5/daily'], /--refill needs --quota/],
    [['limits', 'key_x'], /limits needs/],
    [['update', 'key_x'], /update needs/],
    [['update', 'key_x', '--metadata', '{x'], /--metadata must be a JSON object/],
    [['rotate', 'key_x'], /--overlap/],
    [['rotate', 'key_x', '--overlap', 'soon'], /--overlap/],
    [['revoke'], /usage: npx -y pnpm@10\.34\.9 keys revoke/],
    [['list', '--bogus'], /Unknown option/],
    [['usage'], /usage: npx -y pnpm@10\.34\.9 keys usage <id>/],
    [['usage', 'key_x', '--interval', 'week'], /`interval` must be minute, hour or day \(interval\)/],
    [['usage', 'key_x', '--from', 'yesterday'], /\(from\)/],
    [['usage', 'key_x', '--interval', 'minute', '--from', '2030-01-01T00:00:00Z', '--to', '2030-01-03T00:00:00Z'], /at most 1440 per request/],
  ])('refuses %j with exit 2', async (args, message) => {
    const { code, err } = await cli(args, { DATA_DIR: dataDir });
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });

  it('exits 78 on a bad configuration', async () => {
    const { code, err } = await cli(['list'], { DATA_DIR: dataDir, KEY_PREFIX: 'NOPE' });
    expect(code).toBe(78);
    expect(err).toContain('KEY_PREFIX');
  });

  it('creates a key with metadata and an IP allowlist, and refuses bad ones with the field named', async () => {
    // Its own data directory: the walk below lists every key of the shared one.
    const ownDir = tempDir('orders-cli-meta-');
    await copyPgliteDataDir(join(ownDir, 'pgdata'));
    const env = { DATA_DIR: ownDir, LOG_LEVEL: 'silent' };
    const args = ['create', '--name', 'tenant', '--scopes', 'orders:read', '--json'];
    const created = await cli([...args, '--metadata', '{"tenant":"t_42"}', '--ip-allowlist', '203.0.113.0/24, ::1'], env);
    expect(created.code, created.err).toBe(0);
    expect(JSON.parse(created.out)).toMatchObject({ metadata: { tenant: 't_42' }, ipAllowlist: ['203.0.113.0/24', '::1/128'] });
    const badJson = await cli([...args, '--metadata', '{tenant'], env);
    expect([badJson.code, badJson.err]).toEqual([2, expect.stringMatching(/--metadata must be a JSON object/)]);
    const badCidr = await cli([...args, '--ip-allowlist', '10.0.0.1/8'], env);
    expect(badCidr.code).toBe(2);
    expect(badCidr.err).toMatch(/host bits.*\(ipAllowlist/);

    // update replaces either and keeps the rest; none removes it.
    const id = JSON.parse(created.out).id as string;
    const updated = await cli(['update', id, '--metadata', '{"tenant":"t_43","plan":"pro"}', '--json'], env);
    expect(updated.code, updated.err).toBe(0);
    expect(JSON.parse(updated.out)).toMatchObject({ id, metadata: { tenant: 't_43', plan: 'pro' }, ipAllowlist: ['203.0.113.0/24', '::1/128'] });
    const opened = await cli(['update', id, '--ip-allowlist', 'none'], env);
    expect(opened.code, opened.err).toBe(0);
    expect(opened.out).toMatch(/metadata:\s+\{"tenant":"t_43","plan":"pro"\}\nip allowed: any address\n/);
    const cleared = await cli(['update', id, '--metadata', 'none', '--json'], env);
    expect(JSON.parse(cleared.out)).toMatchObject({ metadata: {}, ipAllowlist: null });
    expect(await cli(['update', id], env)).toMatchObject({ code: 2, err: expect.stringMatching(/update needs --metadata and\/or --ip-allowlist/) });
    expect(await cli(['update', id, '--ip-allowlist', '10.0.0.1/8'], env)).toMatchObject({ code: 2, err: expect.stringMatching(/host bits/) });
    expect(await cli(['update', 'key_doesnotexist000000000', '--metadata', 'none'], env)).toMatchObject({ code: 1, err: 'No key with this id.\n' });
    rmSync(ownDir, { recursive: true, force: true });
  }, 120_000);

  it('creates, lists, shows, rotates and revokes keys on the PGlite data directory', async () => {
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const created = await cli(['create', '--name', 'ci', '--scopes', 'orders:read,reports:read', '--rate', '10/1s', '--json'], env);
    expect(created.code, created.err).toBe(0);
    const record = JSON.parse(created.out);
    expect(record).toMatchObject({ name: 'ci', scopes: ['orders:read', 'reports:read'], rateLimit: { limit: 10, windowSeconds: 1 } });
    expect(record.key).toMatch(/^ks_live_/);

    const listed = await cli(['list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out).map((k: { id: string }) => k.id)).toEqual([record.id]);
    expect(listed.out).not.toContain(record.key);

    const rotated = await cli(['rotate', record.id, '--overlap', '1h', '--json'], env);
    expect(rotated.code, rotated.err).toBe(0);
    expect(JSON.parse(rotated.out).secrets).toHaveLength(2);

    const revoked = await cli(['revoke', record.id], env);
    expect(revoked).toMatchObject({ code: 0, out: `Revoked key ${record.id}.\n` });

    const shown = await cli(['show', record.id], env);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/status:\s+revoked/);

    const metered = await cli(['create', '--name', 'metered', '--scopes', 'reports:read', '--rate', '10/1s,10000/1d', '--quota', '100', '--refill', '100/monthly', '--json'], env);
    expect(metered.code, metered.err).toBe(0);
    const m = JSON.parse(metered.out);
    expect(m).toMatchObject({
      rateLimits: [{ limit: 10, windowSeconds: 1, name: '1s' }, { limit: 10_000, windowSeconds: 86_400, name: '1d' }],
      quota: { remaining: 100, refill: { amount: 100, interval: 'monthly' } },
    });
    const limited = await cli(['limits', m.id, '--quota', '7', '--rate', 'default', '--json'], env);
    expect(limited.code, limited.err).toBe(0);
    expect(JSON.parse(limited.out)).toMatchObject({ rateLimits: null, quota: { remaining: 7, refill: { amount: 100, interval: 'monthly' } } });
    const refill = await cli(['limits', m.id, '--refill', '20/3600s'], env);
    expect(refill.code, refill.err).toBe(0);
    expect(refill.out).toMatch(/quota:\s+7 credits left \(refills to 20 every 3600s, next /);
    const showQuota = await cli(['show', m.id], env);
    expect(showQuota.out).toMatch(/quota:\s+7 credits left/);
    const bad = await cli(['limits', m.id, '--quota', '-1'], env);
    expect(bad.code).toBe(2);

    // Shadow mode: a rate limit observed, then the quota switched alone (its count kept).
    const observed = await cli(['limits', m.id, '--rate', '5/1m', '--mode', 'observe', '--json'], env);
    expect(observed.code, observed.err).toBe(0);
    expect(JSON.parse(observed.out)).toMatchObject({ rateLimits: [{ limit: 5, windowSeconds: 60, mode: 'observe' }], quota: { remaining: 7 } });
    const quotaObserved = await cli(['limits', m.id, '--quota-mode', 'observe'], env);
    expect(quotaObserved.code, quotaObserved.err).toBe(0);
    expect(quotaObserved.out).toMatch(/quota:\s+7 credits left \(.*\), observed: counted, never refusing/);
    const quotaEnforced = await cli(['limits', m.id, '--quota-mode', 'enforce', '--json'], env);
    expect(JSON.parse(quotaEnforced.out).quota).toEqual(expect.not.objectContaining({ mode: expect.anything() }));
    expect((await cli(['limits', m.id, '--mode', 'observe'], env)).code).toBe(2);
    expect((await cli(['limits', m.id, '--quota-mode', 'sometimes'], env)).code).toBe(2);

    const missing = await cli(['show', 'key_doesnotexist000000000'], env);
    expect(missing).toMatchObject({ code: 1, err: 'No key with this id.\n' });
  }, 60_000);

  it('exits 3 with advice when a running server holds the data directory', () => {
    const release = lockDataDir(dataDir, 'server');
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'list'], {
        cwd: EXAMPLE,
        env: { ...process.env, DATA_DIR: dataDir, TSX_TSCONFIG_PATH: `${ROOT}tsconfig.json` },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.stderr).toMatch(/holds .*Stop the server.*\/api\/keys/s);
      expect(run.status).toBe(3);
    } finally {
      release();
    }
  }, 40_000);
});
