/**
 * GitHub's secret-scanning alerts at LEAK_ALERT_PATH. Four instances, one
 * per adapter, on one PostgreSQL database (its LISTEN/NOTIFY revocation bus), with the
 * signing keys served by a local stand-in for api.github.com and alerts signed by a test
 * key pair as GitHub signs them (ECDSA P-256, SHA-256, base64 DER). A valid alert revokes
 * the key on every instance before the answer; a tampered body, a wrong signature, an
 * unknown key id, a non-existent token and a replay revoke nothing. Skips without PostgreSQL.
 *
 * The key record's leak fields on the embedded PGlite (no server needed), with `LEAK_ALERT_POLICY=mark`:
 * after a signed alert the admin API (`GET /api/keys/{id}`, the list) shows `leakedAt` and
 * the cleaned URL, a key the alert's URL holds is never shown, refused alerts record
 * nothing, and the CLI's `keys show`/`keys list` show the leak. There too: an alert's
 * bounds over HTTP (256 tokens, 256 KiB, a member named twice, 200 copies of one key are
 * one leak and one log line), and an oversized body answered with `Connection: close`.
 */
import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKey } from '@keyset/core';
import { rmSync } from 'node:fs';
import { githubAlertSigner, postgresUrl, secretLeak } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.ts';
import { ADAPTERS } from '../src/config.ts';
import { call, createDatabase, dropDatabase, startApi, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();
const PATH = '/secret-scanning/github';

describe.skipIf(serverUrl === undefined)('secret-scanning alerts (LEAK_ALERT_PATH), one instance per adapter', () => {
  const database = `orders_api_leaks_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let github: Awaited<ReturnType<typeof githubAlertSigner>>;
  let keyServer: Server;
  let instances: TestApi[] = [];
  let admin: string;

  const issue = async (): Promise<{ key: string; id: string }> => {
    const res = await call(instances[0]!.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'leaky', scopes: ['orders:read'] } });
    expect(res.status, res.text).toBe(201);
    return res.body as { key: string; id: string };
  };
  const statuses = async (key: string): Promise<number[]> => Promise.all(instances.map(async (t) => (await call(t.api.url, '/api/orders?limit=1', { key })).status));
  const alertBody = (token: string): string =>
    JSON.stringify([{ token, type: 'ks_live_key', url: 'https://github.com/octo/app/blob/abc123/.env', source: 'content' }]);
  const post = (t: TestApi, body: string, headers: Record<string, string>) =>
    call(t.api.url, PATH, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const signed = async (t: TestApi, body: string, id = 'k1') => post(t, body, { 'github-public-key-identifier': id, 'github-public-key-signature': await github.sign(body) });

  beforeAll(async () => {
    github = await githubAlertSigner();
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.pem, is_current: true }] });
    keyServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(published));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    const databaseUrl = await createDatabase(serverUrl!, database);
    const common = {
      databaseUrl,
      seedOrders: 20,
      cursorSecrets: ['x'.repeat(32)],
      leakAlertPath: PATH,
      leakAlertKeysUrl: `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/meta/public_keys/secret_scanning`,
    };
    // One after the other: the first creates the schema and the admin key.
    for (const adapter of ADAPTERS) instances.push(await startApi({ ...common, adapter }));
    admin = instances[0]!.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map((t) => t.stop({ remove: true })));
    await new Promise((resolve) => keyServer?.close(resolve));
    await dropDatabase(serverUrl!, database);
  });

  it.each(ADAPTERS.map((adapter, i) => [adapter, i] as const))('a valid alert to the %s instance revokes the key on every instance before it answers', async (_adapter, i) => {
    const { key, id } = await issue();
    expect(await statuses(key)).toEqual([200, 200, 200, 200]); // cached as valid everywhere
    const res = await signed(instances[i]!, alertBody(key));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([{ token_raw: key, token_type: 'ks_live_key', label: 'true_positive' }]);
    expect(await statuses(key)).toEqual([401, 401, 401, 401]);
    const record = await call(instances[(i + 1) % instances.length]!.api.url, `/api/keys/${id}`, { key: admin });
    expect(record.body.revokedAt).not.toBeNull();
    // The leak is on the record when the answer arrives, read through another instance.
    expect(record.body.leakUrl).toBe('https://github.com/octo/app/blob/abc123/.env');
    expect(Date.parse(record.body.leakedAt as string)).toBeLessThanOrEqual(Date.parse(record.body.revokedAt as string));
    const logs = instances[i]!.logs.join('\n');
    expect(logs).toContain(id); // the warning names the key by id
    expect(logs).not.toContain(key.slice(8, 30)); // and never by its text
    // One line for the alert, not one per token.
    const lines = instances[i]!.logs.filter((line) => line.includes('"component":"secret-scanning"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, tokens: 1, distinct: 1, leaked: [{ keyId: id, last4: key.slice(-4) }], msg: 'secret scanning alert processed' });
    instances[i]!.logs.length = 0;
  });

  it('refuses a tampered body, a wrong signature, an unknown key id and a replay; labels a stranger false_positive; revokes nothing', async () => {
    const { key } = await issue();
    const body = alertBody(key);
    const signature = await github.sign(body);
    const other = await githubAlertSigner();
    for (const t of instances) {
      const tampered = await post(t, body.replace('abc123', 'abc124'), { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signature });
      expect([tampered.status, tampered.body.field]).toEqual([400, 'github-public-key-signature']);
      const wrong = await post(t, body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await other.sign(body) });
      expect(wrong.status).toBe(400);
      // An unknown key id within a minute of the last fetch of the key list: "send it again
      // later" (it may be GitHub's next key), and no fetch.
      const unknown = await signed(t, body, `unknown-${t.api.config.adapter}`);
      expect([unknown.status, unknown.body.code, Number(unknown.headers.get('retry-after')) > 0]).toEqual([503, 'unavailable', true]);
      const stranger = generateKey('ks_live');
      const res = await signed(t, alertBody(stranger));
      expect(res.body).toEqual([{ token_raw: stranger, token_type: 'ks_live_key', label: 'false_positive' }]);
      expect(JSON.stringify(tampered.body) + JSON.stringify(unknown.body)).not.toContain(key.slice(8, 30));
    }
    expect(await statuses(key)).toEqual([200, 200, 200, 200]);
    // The same alert twice to one instance: the first revokes, the second is refused before
    // any lookup (core's test shows, with policy 'mark', that the hook runs once).
    const replayBody = alertBody(key);
    expect((await signed(instances[1]!, replayBody)).status).toBe(200);
    const replay = await signed(instances[1]!, replayBody);
    expect([replay.status, replay.body.detail]).toEqual([400, 'This alert was already processed.']);
  });

  it('leaves every other route to the adapter', async () => {
    expect((await call(instances[2]!.api.url, PATH)).status).toBe(404);
    expect((await call(instances[2]!.api.url, '/healthz')).status).toBe(200);
  });
});

describe("secret-scanning alerts on PGlite, policy 'mark': the key record shows the leak", () => {
  let github: Awaited<ReturnType<typeof githubAlertSigner>>;
  let keyServer: Server;
  let t: TestApi;
  let admin: string;
  const FOUND = 'https://github.com/octo/app/blob/abc123/.env';

  const issue = async (name: string): Promise<{ key: string; id: string }> => {
    const res = await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name, scopes: ['orders:read'] } });
    expect(res.status, res.text).toBe(201);
    return res.body as { key: string; id: string };
  };
  const signed = async (body: string, headers: Record<string, string> = {}) =>
    call(t.api.url, PATH, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': await github.sign(body), ...headers },
    });

  beforeAll(async () => {
    github = await githubAlertSigner();
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.pem, is_current: true }] });
    keyServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(published));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    t = await startApi({
      seedOrders: 20,
      cursorSecrets: ['x'.repeat(32)],
      leakAlertPath: PATH,
      leakAlertPolicy: 'mark',
      leakAlertKeysUrl: `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/meta/public_keys/secret_scanning`,
    });
    admin = t.api.adminKey!;
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ remove: true });
    await new Promise((resolve) => keyServer?.close(resolve));
  });

  it('bounds an alert: over 256 tokens or 256 KiB is a 400 naming the limit, duplicate members are malformed, 200 copies of one key are one leak and one log line', async () => {
    const over = JSON.stringify(Array.from({ length: 257 }, () => ({ token: generateKey('ks_live'), type: 'ks_live_key' })));
    const tooMany = await signed(over);
    expect([tooMany.status, tooMany.body.code, tooMany.body.field, tooMany.body.max_tokens]).toEqual([400, 'invalid_request', 'body', 256]);
    const big = JSON.stringify([{ token: generateKey('ks_live'), type: 'ks_live_key', url: `https://github.com/${'a'.repeat(262_144)}` }]);
    const tooBig = await signed(big);
    expect([tooBig.status, tooBig.body.field]).toEqual([400, 'body']);
    const copied = await issue('copied');
    const twice = `[{"token":${JSON.stringify(generateKey('ks_live'))},"token":${JSON.stringify(copied.key)},"type":"ks_live_key"}]`;
    const duplicate = await signed(twice);
    expect([duplicate.status, duplicate.body.field]).toEqual([400, 'body']);
    expect((await call(t.api.url, `/api/keys/${copied.id}`, { key: admin })).body).toMatchObject({ leakedAt: null });
    t.logs.length = 0;
    const copies = await signed(JSON.stringify(Array.from({ length: 200 }, () => ({ token: copied.key, type: 'ks_live_key', url: FOUND }))));
    expect(copies.status, copies.text).toBe(200);
    expect((copies.body as { label: string }[]).map((a) => a.label)).toEqual(Array.from({ length: 200 }, () => 'true_positive'));
    const lines = t.logs.filter((line) => line.includes('"component":"secret-scanning"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ tokens: 200, distinct: 1, leaked: [{ keyId: copied.id, last4: copied.key.slice(-4) }], policy: 'mark' });
    expect(secretLeak(t.logs.join('\n'), [copied.key])).toBeUndefined();
  });

  it('an oversized body, sent chunked, is refused with Connection: close, so a keep-alive client does not reuse a connection the server stops reading', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const port = Number(new URL(t.api.url).port);
    const send = async (body: Buffer, chunked: boolean) => {
      const headers = { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await github.sign(body.toString()) };
      return new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const request = http.request(
          { host: '127.0.0.1', port, path: PATH, method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
          },
        );
        request.on('error', reject);
        if (chunked) for (let at = 0; at < body.length; at += 65_536) request.write(body.subarray(at, at + 65_536));
        request.end(chunked ? undefined : body);
      });
    };
    try {
      for (const chunked of [true, false]) {
        const refused = await send(Buffer.alloc(2 * 1024 * 1024, 0x20), chunked);
        expect(refused).toEqual({ status: 400, connection: 'close' });
        // A new connection, not a hang-up (a body never sent before: a replay is refused).
        expect((await send(Buffer.from(`[${' '.repeat(chunked ? 1 : 2)}]`), false)).status).toBe(200);
      }
    } finally {
      agent.destroy();
    }
  });

  it('GET /api/keys/{id} and the list show leakedAt and the URL; a URL holding the key shows none of it; refused alerts record nothing; the CLI shows the leak', async () => {
    const leaked = await issue('leaky');
    const untouched = await issue('untouched');
    const before = Date.now();
    const res = await signed(JSON.stringify([{ token: leaked.key, type: 'ks_live_key', url: FOUND, source: 'content' }]));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([{ token_raw: leaked.key, token_type: 'ks_live_key', label: 'true_positive' }]);
    const record = await call(t.api.url, `/api/keys/${leaked.id}`, { key: admin });
    expect(record.body).toMatchObject({ leakUrl: FOUND, revokedAt: null });
    expect(Date.parse(record.body.leakedAt as string)).toBeGreaterThanOrEqual(before - 1);
    expect((await call(t.api.url, '/api/orders?limit=1', { key: leaked.key })).status).toBe(200); // 'mark' leaves it live

    // The alert's URL may hold the key itself, whole or cut short: the record shows none of it.
    const cut = await issue('cut');
    const secret = cut.key.slice(cut.key.lastIndexOf('_') + 1);
    const hostile = `https://github.com/octo/app/blob/main/${secret.slice(3, 25)}?copy=${cut.key}`;
    expect((await signed(JSON.stringify([{ token: cut.key, type: 'ks_live_key', url: hostile }]))).status).toBe(200);
    const cutRecord = await call(t.api.url, `/api/keys/${cut.id}`, { key: admin });
    expect(cutRecord.body.leakedAt).not.toBeNull();
    expect(cutRecord.body.leakUrl).toMatch(/^https:\/\/github\.com\//);
    expect(secretLeak(cutRecord.text, [cut.key])).toBeUndefined();
    expect(secretLeak(t.logs.join('\n'), [cut.key, leaked.key])).toBeUndefined();

    // Refused alerts (tampered, wrong key id) and a key reported again change nothing.
    const body = JSON.stringify([{ token: untouched.key, type: 'ks_live_key', url: FOUND }]);
    const tampered = await call(t.api.url, PATH, {
      method: 'POST',
      body: body.replace('abc123', 'abc124'),
      headers: { 'content-type': 'application/json', 'github-public-key-identifier': 'k1', 'github-public-key-signature': await github.sign(body) },
    });
    expect(tampered.status).toBe(400);
    expect((await signed(body, { 'github-public-key-identifier': 'k-unknown' })).status).toBe(503);
    expect((await call(t.api.url, `/api/keys/${untouched.id}`, { key: admin })).body).toMatchObject({ leakedAt: null, leakUrl: null });
    expect((await signed(JSON.stringify([{ token: leaked.key, type: 'ks_live_key', url: 'https://github.com/octo/other/issues/1' }]))).status).toBe(200);
    expect((await call(t.api.url, `/api/keys/${leaked.id}`, { key: admin })).body).toMatchObject({ leakedAt: record.body.leakedAt, leakUrl: FOUND });

    const list = await call(t.api.url, '/api/keys?limit=10', { key: admin });
    const listed = (list.body.items as { id: string; leakedAt: string | null; leakUrl: string | null }[]).find((k) => k.id === leaked.id);
    expect(listed).toMatchObject({ leakedAt: record.body.leakedAt, leakUrl: FOUND });

    // The CLI opens the data directory itself: the server lets go of it first.
    const dataDir = t.dataDir;
    await t.stop();
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const run = async (args: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await runCli(args, { env, out: (s) => void (out += s), err: (s) => void (err += s) });
      return { code, out, err };
    };
    const shown = await run(['show', leaked.id]);
    expect(shown.code, shown.err).toBe(0);
    const day = (record.body.leakedAt as string).slice(0, 19).replace('T', ' ');
    expect(shown.out).toContain(`leaked:     ${day} at ${FOUND}`);
    expect((await run(['show', untouched.id])).out).toMatch(/leaked:\s+-\n/);
    const table = await run(['list']);
    expect(table.out.split('\n')[0]).toContain('LEAKED (UTC)');
    expect(table.out.split('\n').find((line) => line.startsWith(leaked.id))).toContain(day);
    const json = await run(['list', '--json']);
    expect(JSON.parse(json.out).find((k: { id: string }) => k.id === leaked.id)).toMatchObject({ leakedAt: record.body.leakedAt, leakUrl: FOUND });
    expect(secretLeak(json.out, [cut.key, leaked.key, untouched.key])).toBeUndefined();
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);
});
