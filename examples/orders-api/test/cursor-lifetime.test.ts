/**
 * The example's cursors have a lifetime: `CURSOR_TTL_SECONDS`, one day
 * by default, after which a cursor is 400 `invalid_cursor` ("expired") instead of paging
 * forever from wherever it was copied to. Here the lifetime is 1 s, and the test waits
 * until the clock has passed it (a condition on the clock, not a time budget).
 *
 * Without `CURSOR_SECRETS` each data directory makes its own secret (development mode):
 * a cursor from another instance is refused there with a detail that says so, on every
 * adapter, and names no secret; with configured secrets the detail stays the plain one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, loadConfig } from '../src/config.ts';
import { loadOrCreateCursorSecret } from '../src/data-dir.ts';
import { rmSync } from 'node:fs';
import { call, serveAlso, startApi, tempDir, type TestApi } from './helpers.ts';

describe('cursor lifetime', () => {
  let t: TestApi;
  let admin: string;
  beforeAll(async () => {
    t = await startApi({ seedOrders: 10, cursorTtlSeconds: 1, logLevel: 'silent' });
    admin = readFileSync(join(t.dataDir, 'admin.key'), 'utf8').trim();
  });
  afterAll(async () => {
    await t?.stop({ remove: true });
  });

  it('defaults to one day and reads CURSOR_TTL_SECONDS; refuses anything but whole seconds', () => {
    expect(loadConfig({}).cursorTtlSeconds).toBe(86_400);
    expect(loadConfig({ CURSOR_TTL_SECONDS: '900' }).cursorTtlSeconds).toBe(900);
    for (const bad of ['0', '-5', '1.5', '1e3', 'day', '01']) {
      expect(() => loadConfig({ CURSOR_TTL_SECONDS: bad }), bad).toThrow(/CURSOR_TTL_SECONDS/);
    }
  });

  it('refuses a cursor older than its lifetime with 400 invalid_cursor, expired', async () => {
    const base = t.api.url;
    const issued = await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    const first = await call(base, '/api/keys?limit=1', { key: admin });
    expect(first.status).toBe(200);
    const cursor = (first.body as { nextCursor: string | null }).nextCursor;
    expect(typeof cursor).toBe('string');
    const gotAt = Date.now();
    // Issue times are whole seconds: past 1 s of lifetime for certain once 2.5 s have gone by.
    while (Date.now() - gotAt < 2_500) await new Promise((resolve) => setTimeout(resolve, 100));
    const later = await call(base, `/api/keys?limit=1&cursor=${encodeURIComponent(cursor as string)}`, { key: admin });
    expect(later.status).toBe(400);
    expect(later.body).toMatchObject({ code: 'invalid_cursor' });
    expect((later.body as { detail: string }).detail).toMatch(/expired/i);
  });

  it('a cursor from another instance with its own development secret: 400 invalid_cursor saying that likely cause, on every adapter', async () => {
    const first = await call(t.api.url, '/api/keys?limit=1', { key: admin });
    const cursor = encodeURIComponent((first.body as { nextCursor: string }).nextCursor);
    const ours = loadOrCreateCursorSecret(t.dataDir);
    const otherDir = tempDir();
    try {
      const theirs = loadOrCreateCursorSecret(otherDir);
      for (const adapter of ADAPTERS) {
        const other = await serveAlso(t, adapter, { cursorSecrets: [theirs] });
        const configured = await serveAlso(t, adapter, { cursorSecrets: ['a-configured-secret-of-forty-characters!'] });
        try {
          const refused = await call(other.url, `/api/keys?limit=1&cursor=${cursor}`, { key: admin });
          expect(refused.status, adapter).toBe(400);
          expect(refused.body).toMatchObject({ code: 'invalid_cursor' });
          const { detail } = refused.body as { detail: string };
          expect(detail, adapter).toMatch(/another instance/);
          expect(detail).toMatch(/development mode/);
          expect(detail).toMatch(/same CURSOR_SECRET/);
          for (const secret of [ours, theirs]) for (const part of secret.split(':')) expect(refused.text).not.toContain(part);
          const plain = await call(configured.url, `/api/keys?limit=1&cursor=${cursor}`, { key: admin });
          expect(plain.status).toBe(400);
          expect((plain.body as { detail: string }).detail, adapter).toBe('The cursor is malformed or was not issued for this query; restart from the first page.');
        } finally {
          await other.close();
          await configured.close();
        }
      }
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
