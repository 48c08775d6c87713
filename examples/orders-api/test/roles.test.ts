/**
 * Roles end to end: two example instances (Hono and Express, plus Fastify and Fetch
 * servers over the first) on one PostgreSQL database and one Redis revocation bus. The
 * admin API creates, reads, changes and deletes roles and assigns them to keys and owners,
 * audited; and, as a property, after any role change returns, no instance admits or
 * refuses a request by the old role. Skips when PostgreSQL or Redis does not answer
 * (TEST_DATABASE_URL / TEST_REDIS_URL).
 */
import { postgresUrl, redisUrl } from '@keyset/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.ts';
import { call, createDatabase, dropDatabase, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const ADMIN_LIMIT = { limit: 1_000_000, windowSeconds: 1 };
const pgUrl = await postgresUrl();
const redis = await redisUrl();

/** The two scopes the example's read routes require, and a route that needs each. */
const ROUTES = { 'orders:read': '/api/orders?limit=1', 'reports:read': '/api/reports/daily?date=2026-01-01' } as const;
type Scope = keyof typeof ROUTES;
const SCOPES = Object.keys(ROUTES) as Scope[];

describe.skipIf(pgUrl === undefined || redis === undefined)('roles across instances (PostgreSQL + Redis)', () => {
  const database = `orders_api_roles_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const instances: TestApi[] = [];
  const extra: ExtraServer[] = [];
  let urls: string[] = [];
  let admin: string;
  let databaseUrl: string;

  const cli = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const code = await runCli(argv, {
      env: { DATABASE_URL: databaseUrl, REDIS_URL: redis!, DATA_DIR: instances[0]!.dataDir, LOG_LEVEL: 'silent' },
      out: (text) => (out += text),
      err: (text) => (err += text),
    });
    return { code, out, err };
  };

  const send = async (method: string, path: string, body?: unknown, expected = 200, at = 0) => {
    const res = await call(urls[at % urls.length]!, path, body === undefined ? { key: admin, method } : { key: admin, method, body });
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(expected);
    return res.body as Record<string, unknown>;
  };

  beforeAll(async () => {
    databaseUrl = await createDatabase(pgUrl!, database);
    // The keyring caches keys for 30 s: only the revocation bus makes a cached key see a role change in time.
    const common = { databaseUrl, redisUrl: redis!, seedOrders: 20, cursorSecrets: ['x'.repeat(32)], rateLimit: ADMIN_LIMIT };
    instances.push(await startApi({ ...common, adapter: 'hono' }));
    instances.push(await startApi({ ...common, adapter: 'express' }));
    extra.push(await serveAlso(instances[0]!, 'fastify'), await serveAlso(instances[1]!, 'fetch'));
    urls = [instances[0]!.api.url, instances[1]!.api.url, ...extra.map((s) => s.url)];
    admin = instances[0]!.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(extra.map((s) => s.close()));
    await Promise.all(instances.map((t) => t.stop({ remove: true })));
    await dropDatabase(pgUrl!, database);
  });

  it('creates, reads, changes and deletes roles and assigns them, on every adapter, audited', async () => {
    const role = await send('POST', '/api/roles', { name: 'reader', permissions: ['orders:read'], description: 'reads orders' }, 201, 0);
    expect(role).toMatchObject({ name: 'reader', permissions: ['orders:read'], description: 'reads orders' });
    await send('POST', '/api/roles', { name: 'reader', permissions: [] }, 400, 1);
    await send('POST', '/api/roles', { name: 'x', permissions: ['a b'] }, 400, 2);
    await send('POST', '/api/roles', { name: 'x', permissions: [], extra: 1 }, 400, 3);
    expect(await send('GET', '/api/roles/reader', undefined, 200, 1)).toEqual(role);
    await send('GET', '/api/roles/nobody', undefined, 404, 2);
    expect(((await send('GET', '/api/roles', undefined, 200, 3)).items as { name: string }[]).map((r) => r.name)).toContain('reader');
    await send('POST', '/api/owners', { id: 'cus_roles' }, 201, 0);
    const key = (await send('POST', '/api/keys', { name: 'role-holder', scopes: [], ownerId: 'cus_roles', rateLimit: ADMIN_LIMIT }, 201, 1)) as { key: string; id: string };
    expect((await call(urls[2]!, ROUTES['orders:read'], { key: key.key })).status).toBe(403);
    expect(await send('PUT', `/api/keys/${key.id}/roles`, { roles: ['reader'] }, 200, 2)).toMatchObject({ roles: ['reader'], permissions: ['orders:read'] });
    await send('PUT', `/api/keys/${key.id}/roles`, { roles: ['nobody'] }, 400, 3);
    await send('PUT', `/api/keys/${key.id}/roles`, {}, 400, 0);
    await send('PUT', '/api/keys/key_none/roles', { roles: [] }, 404, 1);
    // Ids and names no key, owner or role can have: 404, never a database error.
    await send('PUT', '/api/keys/key_%00/roles', { roles: [] }, 404, 2);
    await send('GET', '/api/owners/a%00b/roles', undefined, 404, 3);
    await send('GET', `/api/roles/${'r'.repeat(65)}`, undefined, 404, 0);
    await send('PATCH', '/api/roles/%00', { description: 'x' }, 404, 1);
    await send('PUT', `/api/keys/${key.id}/roles`, { roles: ['a\u0000b'] }, 400, 2);
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(200);
    await send('PATCH', '/api/roles/reader', { permissions: ['reports:read'] }, 200, 3);
    for (const url of urls) {
      expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(403);
      expect((await call(url, ROUTES['reports:read'], { key: key.key })).status).toBe(200);
    }
    await send('POST', '/api/roles', { name: 'orders', permissions: ['orders:read'] }, 201, 0);
    expect(await send('PUT', '/api/owners/cus_roles/roles', { roles: ['orders'] }, 200, 1)).toMatchObject({ roles: ['orders'] });
    expect(await send('GET', `/api/keys/${key.id}/roles`, undefined, 200, 2)).toMatchObject({ roles: ['reader'], inheritedRoles: ['orders'], permissions: ['reports:read', 'orders:read'] });
    expect(await send('GET', '/api/owners/cus_roles/roles', undefined, 200, 3)).toMatchObject({ roles: ['orders'] });
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(200);
    await send('DELETE', '/api/roles/orders', undefined, 204, 2);
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(403);
    const audit = (await send('GET', '/api/audit?limit=100', undefined, 200, 0)).items as { action: string; target: { type: string; id: string } }[];
    const actions = audit.map((e) => `${e.action} ${e.target.type}:${e.target.id}`);
    for (const expected of ['role.created role:reader', 'role.updated role:reader', `key.roles_set key:${key.id}`, 'owner.roles_set owner:cus_roles', 'role.deleted role:orders']) {
      expect(actions).toContain(expected);
    }
  });

  it('the CLI manages roles; running instances see its changes at once (REDIS_URL), audited as cli', async () => {
    expect(await cli('roles', 'create', 'cli-reader', '--permissions', 'orders:read', '--description', 'from the CLI')).toMatchObject({ code: 0 });
    expect((await cli('roles', 'create', 'cli-reader', '--permissions', 'orders:read')).code).toBe(2);
    expect((await cli('roles', 'create', 'x')).code).toBe(2);
    const key = (await send('POST', '/api/keys', { name: 'cli-held', scopes: [], rateLimit: ADMIN_LIMIT }, 201)) as { key: string; id: string };
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(403);
    const set = await cli('roles', 'key', key.id, '--set', 'cli-reader', '--json');
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toEqual({ id: key.id, roles: ['cli-reader'], inheritedRoles: [], permissions: ['orders:read'] });
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(200);
    expect((await cli('roles', 'key', key.id)).out).toContain('roles cli-reader');
    expect((await cli('roles', 'list')).out).toContain('cli-reader  orders:read  "from the CLI"');
    expect((await cli('roles', 'update', 'cli-reader', '--permissions', 'reports:read')).code).toBe(0);
    for (const url of urls) expect((await call(url, ROUTES['orders:read'], { key: key.key })).status).toBe(403);
    expect((await cli('roles', 'key', key.id, '--set', 'nobody')).code).toBe(2);
    const missing = await cli('roles', 'show', 'nobody');
    expect([missing.code, missing.err]).toEqual([1, 'No role with this name.\n']);
    expect((await cli('roles', 'delete', 'cli-reader')).code).toBe(0);
    const audit = (await send('GET', `/api/audit?target=${key.id}`, undefined, 200)).items as { action: string; actor: string }[];
    expect(audit.map((e) => [e.action, e.actor])).toContainEqual(['key.roles_set', 'cli']);
  });

  it('after any role change returns, every instance admits and refuses by the new roles (property)', async () => {
    await send('POST', '/api/owners', { id: 'cus_prop' }, 201);
    const key = (await send('POST', '/api/keys', { name: 'prop', scopes: [], ownerId: 'cus_prop', rateLimit: ADMIN_LIMIT }, 201)) as { key: string; id: string };
    const names = ['p1', 'p2'];
    for (const name of names) await send('POST', '/api/roles', { name, permissions: [] }, 201);
    const model = { roles: new Map<string, Scope[]>(names.map((n) => [n, []])), key: [] as string[], owner: [] as string[] };
    const permissions = fc.subarray(SCOPES);
    const change = fc.oneof(
      fc.record({ kind: fc.constant('permissions' as const), role: fc.constantFrom(...names), permissions }),
      fc.record({ kind: fc.constant('key' as const), roles: fc.subarray(names) }),
      fc.record({ kind: fc.constant('owner' as const), roles: fc.subarray(names) }),
      fc.record({ kind: fc.constant('recreate' as const), role: fc.constantFrom(...names), permissions }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(change, fc.nat(3)), { minLength: 1, maxLength: 5 }), async (changes) => {
        for (const [c, at] of changes) {
          if (c.kind === 'permissions') {
            await send('PATCH', `/api/roles/${c.role}`, { permissions: c.permissions }, 200, at);
            model.roles.set(c.role, c.permissions);
          } else if (c.kind === 'key') {
            await send('PUT', `/api/keys/${key.id}/roles`, { roles: c.roles }, 200, at);
            model.key = c.roles;
          } else if (c.kind === 'owner') {
            await send('PUT', '/api/owners/cus_prop/roles', { roles: c.roles }, 200, at);
            model.owner = c.roles;
          } else {
            // Deleted and created again: held by no one any more.
            await send('DELETE', `/api/roles/${c.role}`, undefined, 204, at);
            await send('POST', '/api/roles', { name: c.role, permissions: c.permissions }, 201, at + 1);
            model.roles.set(c.role, c.permissions);
            model.key = model.key.filter((n) => n !== c.role);
            model.owner = model.owner.filter((n) => n !== c.role);
          }
          const held = new Set([...model.key, ...model.owner].flatMap((n) => model.roles.get(n) ?? []));
          for (const url of urls) {
            for (const scope of SCOPES) {
              const res = await call(url, ROUTES[scope], { key: key.key });
              expect([url, scope, res.status]).toEqual([url, scope, held.has(scope) ? 200 : 403]);
            }
          }
        }
      }),
      { numRuns: 12 },
    );
  }, 240_000);
});
