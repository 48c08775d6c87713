/**
 * Owner ids over HTTP, on each adapter (embedded PGlite, no server needed): every id the
 * grammar accepts at creation (`POST /api/owners`) can be read, disabled and deleted
 * through `/api/owners/{id}`, and `.` and `..` (which a URL path drops: `/api/owners/..`
 * is `/api/`) are refused at creation with a 400 naming `id` (and `ownerId` when a key is
 * issued with one). Ids are drawn by fast-check
 * from the grammar, with dots, colons, dashes and underscores favoured at both ends.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, startApi, type TestApi } from './helpers.ts';

const ADMIN_LIMIT = { limit: 1_000_000, windowSeconds: 1 };
const EDGE = ['.', ':', '-', '_'] as const;
const ID_CHAR = fc.oneof(fc.constantFrom(...EDGE), fc.constantFrom(...'aZ09xY'));

/** Ids the grammar accepts (1-128 of `A-Z a-z 0-9 _ . : -`, not `.` or `..`), edge characters favoured. */
const ownerId = fc
  .oneof(fc.array(ID_CHAR, { minLength: 1, maxLength: 6 }), fc.array(ID_CHAR, { minLength: 120, maxLength: 128 }))
  .map((chars) => chars.join(''))
  .filter((id) => id !== '.' && id !== '..');

describe.each(ADAPTERS)('owner ids on the %s adapter', (adapter) => {
  let t: TestApi;
  let admin: string;

  beforeAll(async () => {
    t = await startApi({ adapter, seedOrders: 20, cursorSecrets: ['x'.repeat(32)], rateLimit: ADMIN_LIMIT });
    admin = t.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ remove: true });
  });

  it('refuses `.` and `..` (and ids outside the grammar) at creation with a 400 naming id', async () => {
    for (const id of ['.', '..', '%2e', '%2E%2E', 'a/b', 'a%2Fb', '', ' ', 'a b', '{x}', 'x'.repeat(129)]) {
      const res = await call(t.api.url, '/api/owners', { key: admin, method: 'POST', body: { id } });
      expect([res.status, res.body.code, res.body.field], id).toEqual([400, 'invalid_request', 'id']);
    }
    for (const ownerId of ['.', '..']) {
      const res = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'k', scopes: ['orders:read'], ownerId } });
      expect([res.status, res.body.code, res.body.field], ownerId).toEqual([400, 'invalid_request', 'ownerId']);
    }
    const list = await call(t.api.url, '/api/owners?limit=100', { key: admin });
    expect((list.body.items as { id: string }[]).filter((o) => o.id === '.' || o.id === '..')).toEqual([]);
  });

  it('every id it creates can be read, disabled and deleted through /api/owners/{id}', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(ownerId, async (id) => {
        if (seen.has(id)) return;
        seen.add(id);
        const created = await call(t.api.url, '/api/owners', { key: admin, method: 'POST', body: { id } });
        expect(created.status, `${id}: ${created.text}`).toBe(201);
        const path = `/api/owners/${id}`;
        const read = await call(t.api.url, path, { key: admin });
        expect([read.status, read.body.id], id).toEqual([200, id]);
        const disabled = await call(t.api.url, path, { key: admin, method: 'PATCH', body: { disabled: true } });
        expect([disabled.status, disabled.body.disabledAt === null], id).toEqual([200, false]);
        expect((await call(t.api.url, `${path}/keys`, { key: admin })).status, id).toBe(200);
        expect((await call(t.api.url, path, { key: admin, method: 'DELETE' })).status, id).toBe(204);
        expect((await call(t.api.url, path, { key: admin })).status, id).toBe(404);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
