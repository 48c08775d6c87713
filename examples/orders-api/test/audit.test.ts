/**
 * The audit log end to end, on the embedded PGlite: every admin action through each of the
 * four servers leaves exactly one entry made by the admin key with the request's id (which
 * the response carries back);
 * a signed secret-scanning alert leaves its entries as `secret-scanning`; the CLI's
 * changes are `cli`'s; `GET /api/audit` filters and pages with cursors bound to its
 * filters and refuses bad filters with 400 problems; and no entry, through any random
 * admin body, holds an issued key, a stored digest or the pepper.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createPostgresAuditStore } from '@keyset/postgres';
import { generateKey, type AuditEntry } from '@keyset/core';
import { copyPgliteDataDir, githubAlertSigner } from '@keyset/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.ts';
import { ADAPTERS, loadConfig, type AdapterName } from '../src/config.ts';
import { openStorage } from '../src/db/open-storage.ts';
import { call, serveAlso, startApi, tempDir, type ExtraServer, type TestApi } from './helpers.ts';

const PATH = '/secret-scanning/github';
const PEPPER = 'audit-e2e-pepper-0123456789abcdefghij';

describe('audit log over HTTP (PGlite)', () => {
  let t: TestApi;
  let keyServer: Server;
  let sign: (body: string) => Promise<string>;
  let admin: string;
  let adminId: string;
  const servers = new Map<AdapterName, { url: string; close?: () => Promise<void> }>();

  const newest = async (base: string): Promise<AuditEntry & { at: string }> => {
    const res = await call(base, '/api/audit?limit=1', { key: admin });
    expect(res.status, res.text).toBe(200);
    return res.body.items[0];
  };
  const total = async (base: string, query = ''): Promise<number> => {
    const res = await call(base, `/api/audit?offset=0&limit=1${query}`, { key: admin });
    expect(res.status, res.text).toBe(200);
    return res.body.total;
  };

  beforeAll(async () => {
    const github = await githubAlertSigner();
    sign = github.sign;
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.pem, is_current: true }] });
    keyServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(published));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    t = await startApi({
      seedOrders: 20,
      // Every request below is the admin key's, back to back: at the default 100 a second a
      // calm machine was refused with 429 (the log's cursor walk alone is ~60 requests).
      rateLimit: { limit: 1_000_000, windowSeconds: 1 },
      cursorSecrets: ['a'.repeat(32)],
      keyPepper: PEPPER,
      leakAlertPath: PATH,
      leakAlertPolicy: 'revoke',
      leakAlertKeysUrl: `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/meta/public_keys/secret_scanning`,
    });
    admin = t.api.adminKey!;
    servers.set(t.api.config.adapter, { url: t.api.url });
    const others = ADAPTERS.filter((adapter) => !servers.has(adapter));
    const extra = await Promise.all(others.map((adapter) => serveAlso(t, adapter)));
    others.forEach((adapter, i) => servers.set(adapter, extra[i]!));
    // The admin key's issue is the log's first entry, made by the server at its first start.
    const first = await call(t.api.url, '/api/audit?action=key.issued&actor=bootstrap', { key: admin });
    expect(first.body.items).toHaveLength(1);
    adminId = first.body.items[0].target.id;
  }, 120_000);

  afterAll(async () => {
    for (const server of servers.values()) await (server as ExtraServer).close?.();
    await t?.stop({ remove: true });
    await new Promise((resolve) => keyServer?.close(resolve));
  });

  it.each(ADAPTERS)('every admin action through %s leaves exactly one entry, by the admin key, with the request id', async (adapter) => {
    const base = servers.get(adapter)!.url;
    let n = 0;
    /** Sends one admin request and returns the one entry it added to the log. */
    const act = async (method: string, path: string, body?: unknown): Promise<{ entry: AuditEntry; reply: any }> => {
      const requestId = `req-${adapter}-${++n}`;
      const before = await total(base);
      const reply = await call(base, path, { key: admin, method, body, headers: { 'x-request-id': requestId } });
      expect(reply.status, reply.text).toBeLessThan(300);
      expect(reply.headers.get('x-request-id')).toBe(requestId);
      expect(await total(base)).toBe(before + 1);
      const entry = await newest(base);
      expect(entry).toMatchObject({ actor: adminId, requestId });
      return { entry, reply: reply.body };
    };
    const owner = `cus_${adapter}`;
    expect((await act('POST', '/api/owners', { id: owner, metadata: { plan: 'pro' } })).entry).toMatchObject({
      action: 'owner.created',
      target: { type: 'owner', id: owner },
      changes: { metadata: { before: null, after: { plan: 'pro' } } },
    });
    const issued = await act('POST', '/api/keys', { name: `via ${adapter}`, scopes: ['orders:read'], ownerId: owner });
    const id = issued.reply.id as string;
    expect(issued.entry).toMatchObject({ action: 'key.issued', target: { type: 'key', id }, changes: { name: { before: null, after: `via ${adapter}` } } });
    expect((await act('PATCH', `/api/keys/${id}`, { metadata: { team: 'data' }, ipAllowlist: ['10.0.0.0/8'] })).entry).toMatchObject({
      action: 'key.updated',
      changes: { metadata: { before: {}, after: { team: 'data' } }, ipAllowlist: { before: null, after: ['10.0.0.0/8'] } },
    });
    expect((await act('PATCH', `/api/keys/${id}/limits`, { rateLimits: [{ name: 'minute', limit: 60, windowSeconds: 60 }] })).entry).toMatchObject({
      action: 'key.limits_updated',
      changes: { rateLimits: { before: null, after: [{ name: 'minute', limit: 60, windowSeconds: 60 }] } },
    });
    const rotated = await act('POST', `/api/keys/${id}/rotate`, { overlapSeconds: 60 });
    expect(rotated.entry).toMatchObject({ action: 'key.rotated', target: { id } });
    expect(Object.keys(rotated.entry.changes)).toEqual(['secrets']);
    expect((await act('DELETE', `/api/keys/${id}`)).entry).toMatchObject({ action: 'key.revoked', changes: { revokedAt: { before: null } } });
    expect((await act('PATCH', `/api/owners/${owner}`, { metadata: { plan: 'team' } })).entry).toMatchObject({ action: 'owner.updated' });
    expect((await act('PATCH', `/api/owners/${owner}`, { disabled: true })).entry).toMatchObject({ action: 'owner.disabled', changes: { disabledAt: { before: null } } });
    expect((await act('DELETE', `/api/owners/${owner}`)).entry).toMatchObject({ action: 'owner.deleted', target: { type: 'owner', id: owner } });

    // Refused and unknown: no entry.
    const before = await total(base);
    expect((await call(base, '/api/keys/key_0000000000000000000000', { key: admin, method: 'DELETE' })).status).toBe(404);
    expect((await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: '', scopes: ['orders:read'] } })).status).toBe(400);
    expect(await total(base)).toBe(before);

    // No X-Request-Id, a malformed one, one past 64 characters, or one holding key text
    // (whole or 8 characters and more of it): the server makes one, echoes and stores that.
    const refused = [{}, { 'x-request-id': 'two words' }, { 'x-request-id': `${'a-'.repeat(32)}a` }, { 'x-request-id': admin }, { 'x-request-id': admin.slice(-20) }, { 'x-request-id': admin.slice(-8) }];
    for (const headers of refused) {
      const res = await call(base, '/api/owners', { key: admin, method: 'POST', body: { id: `${owner}_${Object.keys(headers).length}${JSON.stringify(headers).length}` }, headers });
      expect(res.status, res.text).toBe(201);
      const made = (await newest(base)).requestId;
      expect(made).toMatch(/^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // The response carries it back, so the client can find its change.
      expect(res.headers.get('x-request-id')).toBe(made);
    }
    // A UUID, as load balancers make them, is kept.
    const uuid = crypto.randomUUID().toUpperCase();
    const kept = await call(base, '/api/owners', { key: admin, method: 'POST', body: { id: `${owner}_uuid` }, headers: { 'x-request-id': uuid } });
    expect([kept.status, kept.headers.get('x-request-id'), (await newest(base)).requestId]).toEqual([201, uuid, uuid]);
  });

  it('a signed leak alert leaves key.leaked then key.revoked, by secret-scanning', async () => {
    const leaked = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'leaky', scopes: ['orders:read'] } });
    const body = JSON.stringify([{ token: leaked.body.key, type: 'ks_live_key', url: 'https://github.com/octo/app/blob/abc123/.env', source: 'content' }]);
    const before = await total(t.api.url);
    const res = await call(t.api.url, PATH, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': await sign(body) },
    });
    expect(res.status, res.text).toBe(200);
    expect(await total(t.api.url)).toBe(before + 2);
    const entries = (await call(t.api.url, `/api/audit?target=${leaked.body.id}`, { key: admin })).body.items as (AuditEntry & { at: string })[];
    expect(entries.map((e) => [e.action, e.actor, e.requestId])).toEqual([
      ['key.revoked', 'secret-scanning', null],
      ['key.leaked', 'secret-scanning', null],
      ['key.issued', adminId, expect.any(String)],
    ]);
    expect(entries[1]!.changes).toEqual({
      leakedAt: { before: null, after: expect.any(String) },
      leakUrl: { before: null, after: 'https://github.com/octo/app/blob/abc123/.env' },
    });
  });

  it('GET /api/audit: filters, cursor pages bound to the filters, 400 problems for bad filters, 403 without keys:admin', async () => {
    const base = t.api.url;
    const all = await total(base);
    // Cursor walk, two per page: every entry once, newest first.
    const seen: (AuditEntry & { at: string })[] = [];
    let next: string | null = '/api/audit?limit=2';
    while (next !== null) {
      const res: Awaited<ReturnType<typeof call>> = await call(base, next, { key: admin });
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.items);
      next = res.body.nextCursor === null ? null : `/api/audit?limit=2&cursor=${encodeURIComponent(res.body.nextCursor)}`;
    }
    expect(seen).toHaveLength(all);
    expect(new Set(seen.map((e) => e.id)).size).toBe(all);
    const order = seen.map((e) => [e.at, e.id].join(' '));
    expect(order).toEqual([...order].sort().reverse());

    const issuedOnly = await call(base, '/api/audit?action=key.issued&limit=2', { key: admin });
    expect(issuedOnly.body.items.every((e: AuditEntry) => e.action === 'key.issued')).toBe(true);
    const cutoff = seen[Math.floor(seen.length / 2)]!.at;
    const older = await call(base, `/api/audit?to=${encodeURIComponent(cutoff)}&limit=100`, { key: admin });
    expect(older.body.items.every((e: { at: string }) => e.at < cutoff)).toBe(true);
    const newer = await call(base, `/api/audit?from=${encodeURIComponent(cutoff)}&limit=100`, { key: admin });
    expect(older.body.items.length + newer.body.items.length).toBe(all);
    expect((await call(base, `/api/audit?actor=${adminId}&target=nobody`, { key: admin })).body.items).toEqual([]);

    // The filters are bound into the cursor.
    const cursor = encodeURIComponent(issuedOnly.body.nextCursor);
    const swapped = await call(base, `/api/audit?action=key.revoked&limit=2&cursor=${cursor}`, { key: admin });
    expect([swapped.status, swapped.body.code]).toEqual([400, 'invalid_cursor']);
    const kept = await call(base, `/api/audit?action=key.issued&limit=2&cursor=${cursor}`, { key: admin });
    expect(kept.status, kept.text).toBe(200);

    for (const [query, field] of [
      ['action=key.frobbed', 'action'],
      ['action=', 'action'],
      ['from=yesterday', 'from'],
      ['to=2030-01-01', 'to'],
      ['from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', 'from'],
      ['target=a&target=b', 'target'],
      [`actor=${'x'.repeat(129)}`, 'actor'],
      ['target=%01', 'target'],
    ] as const) {
      const res = await call(base, `/api/audit?${query}`, { key: admin });
      expect([res.status, res.headers.get('content-type'), res.body.code, res.body.field], query).toEqual([400, 'application/problem+json', 'invalid_request', field]);
    }
    const reader = await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
    const refused = await call(base, '/api/audit', { key: reader.body.key });
    expect([refused.status, refused.body.code]).toEqual([403, 'insufficient_scope']);
  });

  it('holds no issued key, digest or pepper, whatever the admin bodies', async () => {
    const issued: string[] = [];
    const name = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
    const leaf = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.constant(generateKey('ks_live')));
    const metadata = fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), leaf, { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(name, metadata, metadata, fc.integer({ min: 0, max: 600 }), async (keyName, first, second, overlap) => {
        const res = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: keyName, scopes: ['orders:read'], metadata: first } });
        if (res.status !== 201) return; // refused input (e.g. a control character): nothing to leak
        issued.push(res.body.key);
        const { id } = res.body;
        await call(t.api.url, `/api/keys/${id}`, { key: admin, method: 'PATCH', body: { metadata: second } });
        const rotated = await call(t.api.url, `/api/keys/${id}/rotate`, { key: admin, method: 'POST', body: { overlapSeconds: overlap } });
        if (rotated.status === 201) issued.push(rotated.body.key);
        await call(t.api.url, `/api/keys/${id}`, { key: admin, method: 'DELETE' });
      }),
      { numRuns: 12 },
    );
    expect(issued.length).toBeGreaterThan(0);
    const stored = (await t.api.db.query(`SELECT changes::text AS changes, actor, request_id FROM keyset_audit`)).rows;
    const text = JSON.stringify(stored) + (await call(t.api.url, '/api/audit?limit=100', { key: admin })).text;
    const digests = (await t.api.db.query(`SELECT digest FROM keyset_secrets`)).rows.map((r) => String(r.digest));
    for (const key of [...issued, admin]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice('ks_live_'.length, -6));
    }
    for (const digest of digests) expect(text).not.toContain(digest);
    expect(text).not.toContain(PEPPER);
  }, 120_000);
});

describe('audit log of the key CLI (PGlite)', () => {
  const dataDir = tempDir('orders-audit-cli-');
  beforeAll(() => copyPgliteDataDir(join(dataDir, 'pgdata')));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const cli = async (args: string[]): Promise<string> => {
    let out = '';
    let err = '';
    const code = await runCli(args, { env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, out: (s) => void (out += s), err: (s) => void (err += s) });
    expect(code, err).toBe(0);
    return out;
  };

  it('audits every change it makes as `cli`, one entry each', async () => {
    const { id } = JSON.parse(await cli(['create', '--name', 'from the cli', '--scopes', 'orders:read', '--json']));
    await cli(['update', id, '--metadata', '{"tenant":"t_42"}']);
    await cli(['limits', id, '--quota', '7']);
    await cli(['rotate', id, '--overlap', '0']);
    await cli(['revoke', id]);
    await cli(['owners', 'create', 'cus_cli']);
    await cli(['owners', 'update', 'cus_cli', '--disable']);
    await cli(['owners', 'delete', 'cus_cli']);
    await cli(['list']); // reads leave no entry

    const storage = await openStorage(loadConfig({ DATA_DIR: dataDir }), { holder: 'cli' });
    try {
      const { entries } = await createPostgresAuditStore({ client: storage.db }).list({ take: 100 });
      expect(entries.map((e) => [e.action, e.actor, e.requestId, e.target.id])).toEqual([
        ['owner.deleted', 'cli', null, 'cus_cli'],
        ['owner.disabled', 'cli', null, 'cus_cli'],
        ['owner.created', 'cli', null, 'cus_cli'],
        ['key.revoked', 'cli', null, id],
        ['key.rotated', 'cli', null, id],
        ['key.limits_updated', 'cli', null, id],
        ['key.updated', 'cli', null, id],
        ['key.issued', 'cli', null, id],
      ]);
      expect(entries[6]!.changes).toEqual({ metadata: { before: {}, after: { tenant: 't_42' } } });
    } finally {
      await storage.close();
    }
  }, 120_000);
});
