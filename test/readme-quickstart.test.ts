/**
 * The README's quick start, run as pasted (only the port and the data directory
 * differ) against the example server, with bash and curl as a reader would.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyPgliteDataDir } from '@keyset/test-support';
import { createLogger } from '../examples/orders-api/src/logger.ts';
import { createOrdersApi, type OrdersApi } from '../examples/orders-api/src/main.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (!hasCurl) {
  if (process.env.CI === 'true') throw new Error('CI=true and curl is missing: the README quick start cannot be checked');
  console.warn('skipping the README quick start: curl is not installed');
}

function quickStart(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Five-minute quick start'));
  const match = /```sh\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README has no sh block under "Five-minute quick start"');
  return match[1]!;
}

describe.skipIf(!hasCurl)('README quick start', () => {
  let api: OrdersApi;
  let dataDir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'keyset-readme-'));
    await copyPgliteDataDir(join(dataDir, 'pgdata'));
    const logger = createLogger('info', { write: (line: string) => void logs.push(line) });
    api = await createOrdersApi({ port: 0, seedOrders: 300, dataDir, logger });
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('works as pasted', async () => {
    const script = quickStart()
      .replaceAll('http://127.0.0.1:3000', api.url)
      .replaceAll('examples/orders-api/.data/admin.key', join(dataDir, 'admin.key'));
    // Each command's output, separated, so every step can be checked.
    const marked = `${script.replace(/^(curl .*)$/gm, '$1; echo; echo "=== step"')}\necho "issued=$KEY"`;
    // Asynchronously: the server runs in this process and must keep answering.
    const { stdout: out } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', marked], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    const issuedAt = out.lastIndexOf('issued=');
    const issued = out.slice(issuedAt + 'issued='.length).trim();
    expect(issued).toMatch(/^ks_live_[0-9A-Za-z]{38}$/);
    const steps = out.slice(0, issuedAt).split('=== step').map((s) => s.trim()).filter(Boolean);
    expect(steps).toHaveLength(5);
    const [firstPage, offsetPage, report, badDate, inQuery] = steps as [string, string, string, string, string];
    expect(firstPage).toMatch(/^HTTP\/1\.1 200/);
    expect(firstPage).toMatch(/^link: <http:\/\/127\.0\.0\.1:\d+\/api\/orders\?limit=3&cursor=[A-Za-z0-9_-]+>; rel="next"/im);
    const firstBody = JSON.parse(firstPage.slice(firstPage.indexOf('\r\n\r\n') + 4));
    expect(firstBody.items).toHaveLength(3);
    expect(typeof firstBody.nextCursor).toBe('string');
    expect(JSON.parse(offsetPage)).toMatchObject({ total: 300, totalEstimated: true });
    expect(JSON.parse(report)).toHaveProperty('date');
    expect(JSON.parse(badDate)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(JSON.parse(inQuery)).toMatchObject({ status: 400, code: 'api_key_in_query' });
    // Neither key the reader handled reached the server's log, not even in part.
    const admin = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const logText = logs.join('\n');
    expect(logs.length).toBeGreaterThan(5);
    for (const key of [admin, issued]) {
      // Every 8-character window of the secret part (the prefix is public; the last 4 may be logged).
      const secret = key.slice(key.length - 38);
      for (let i = 0; i + 8 <= secret.length; i++) expect(logText).not.toContain(secret.slice(i, i + 8));
    }
  }, 60_000);
});
