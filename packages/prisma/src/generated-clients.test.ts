/**
 * The Prisma Clients the tests import (src/testing/generated) are what `prisma generate`
 * makes from the schemas beside them, offline: `node scripts/generate.mjs` regenerates
 * them into a scratch folder with no network beyond what the install fetched, and every
 * file matches the committed one.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const committed = join(pkg, 'src', 'testing');
const scratch = mkdtempSync(join(tmpdir(), 'keyset-prisma-generate-'));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the generated Prisma Clients', () => {
  it('are regenerated offline from the committed schemas, file for file', () => {
    for (const schema of ['postgres.prisma', 'sqlite.prisma']) cpSync(join(committed, schema), join(scratch, schema));
    // No route to Prisma's binary host: the engine download the CLI would try must not be needed.
    execFileSync(process.execPath, [join(pkg, 'scripts', 'generate.mjs'), scratch], {
      env: { ...process.env, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', PRISMA_ENGINES_MIRROR: 'http://127.0.0.1:9' },
      stdio: 'pipe',
    });
    const made = files(join(scratch, 'generated')).map((f) => relative(join(scratch, 'generated'), f)).sort();
    const kept = files(join(committed, 'generated')).map((f) => relative(join(committed, 'generated'), f)).sort();
    expect(made).toEqual(kept);
    for (const f of made) expect(readFileSync(join(scratch, 'generated', f), 'utf8'), f).toBe(readFileSync(join(committed, 'generated', f), 'utf8'));
  }, 120_000);
});
