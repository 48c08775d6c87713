/**
 * `keys peppers` and KEY_PEPPERS: how many live keys each pepper still holds, on the
 * embedded PGlite data directory (docs/api-keys.md, "Rotating the pepper").
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { copyPgliteDataDir } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.ts';
import { tempDir } from './helpers.ts';

const A = 'pepper-A-0123456789abcdef0123456789';
const B = 'pepper-B-0123456789abcdef0123456789';

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { env, out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

describe('key CLI: peppers', () => {
  const dataDir = tempDir('orders-cli-peppers-');
  beforeAll(() => copyPgliteDataDir(join(dataDir, 'pgdata')));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('counts live keys per pepper, newest first, after KEY_PEPPERS puts a new pepper in front', { timeout: 180_000 }, async () => {
    const underA = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', KEY_PEPPER: A };
    for (const name of ['one', 'two', 'three']) {
      const created = await cli(['create', '--name', name, '--scopes', 'orders:read', '--json'], underA);
      expect(created.code, created.err).toBe(0);
    }
    const revoked = await cli(['revoke', JSON.parse((await cli(['list', '--json'], underA)).out)[0].id], underA);
    expect(revoked.code, revoked.err).toBe(0);

    const rotating = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', KEY_PEPPERS: `${B}, ${A}` };
    const json = await cli(['peppers', '--json'], rotating);
    expect(json.code, json.err).toBe(0);
    const counts = JSON.parse(json.out);
    expect(counts.map((c: { pepper: number; count: number }) => [c.pepper, c.count])).toEqual([
      [0, 0],
      [1, 2],
    ]);
    expect(counts[0].pepperId).toMatch(/^[0-9a-f]{12}$/);
    const human = await cli(['peppers'], rotating);
    expect(human.out).toContain('KEY_PEPPERS 2');
    expect(human.out).toContain('2 live keys');
    expect(human.out).not.toContain(A);
  });

  it('refuses KEY_PEPPER with KEY_PEPPERS, a short or a repeated pepper (exit 78)', async () => {
    for (const env of [{ KEY_PEPPER: A, KEY_PEPPERS: `${B},${A}` }, { KEY_PEPPERS: `${B},short` }, { KEY_PEPPERS: `${B},${B}` }]) {
      const { code, err } = await cli(['peppers'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
      expect(code).toBe(78);
      expect(err).toMatch(/KEY_PEPPER/);
      expect(err).not.toContain(B);
    }
  });
});
