/**
 * Issue 26 item 2: GitHub's secret-scanning alerts at LEAK_ALERT_PATH. Four instances, one
 * per adapter, on one PostgreSQL database (its LISTEN/NOTIFY revocation bus), with the
 * signing keys served by a local stand-in for api.github.com and alerts signed by a test
 * key pair as GitHub signs them (ECDSA P-256, SHA-256, base64 DER). A valid alert revokes
 * the key on every instance before the answer; a tampered body, a wrong signature, an
 * unknown key id, a non-existent token and a replay revoke nothing. Skips without PostgreSQL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKey } from '@keyset/core';
import { postgresUrl } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, startApi, type TestApi } from './helpers.ts';

const serverUrl = await postgresUrl();
const PATH = '/secret-scanning/github';

/** Raw `r || s` → DER: GitHub sends DER, Web Crypto signs raw. */
function rawToDer(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array): number[] => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const digits = [...bytes.subarray(i)];
    return [0x02, ...((digits[0] as number) & 0x80 ? [digits.length + 1, 0] : [digits.length]), ...digits];
  };
  const body = [...integer(raw.subarray(0, 32)), ...integer(raw.subarray(32))];
  return new Uint8Array([0x30, body.length, ...body]);
}

async function keyPair() {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const spki = new Uint8Array(await crypto.subtle.exportKey('spki', pair.publicKey));
  return {
    pem: `-----BEGIN PUBLIC KEY-----\n${Buffer.from(spki).toString('base64')}\n-----END PUBLIC KEY-----\n`,
    async sign(body: string): Promise<string> {
      const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, Buffer.from(body)));
      return Buffer.from(rawToDer(raw)).toString('base64');
    },
  };
}

describe.skipIf(serverUrl === undefined)('secret-scanning alerts (LEAK_ALERT_PATH), one instance per adapter', () => {
  const database = `orders_api_leaks_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let github: Awaited<ReturnType<typeof keyPair>>;
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
    github = await keyPair();
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.pem, is_current: true }] });
    keyServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(published));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${database}`);
    await client.end();
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    const common = {
      databaseUrl: url.href,
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
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await client.end();
  });

  it.each(ADAPTERS.map((adapter, i) => [adapter, i] as const))('a valid alert to the %s instance revokes the key on every instance before it answers', async (_adapter, i) => {
    const { key, id } = await issue();
    expect(await statuses(key)).toEqual([200, 200, 200, 200]); // cached as valid everywhere
    const res = await signed(instances[i]!, alertBody(key));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([{ token_raw: key, token_type: 'ks_live_key', label: 'true_positive' }]);
    expect(await statuses(key)).toEqual([401, 401, 401, 401]);
    const record = await call(instances[0]!.api.url, `/api/keys/${id}`, { key: admin });
    expect(record.body.revokedAt).not.toBeNull();
    const logs = instances[i]!.logs.join('\n');
    expect(logs).toContain(id); // the warning names the key by id
    expect(logs).not.toContain(key.slice(8, 30)); // and never by its text
  });

  it('refuses a tampered body, a wrong signature, an unknown key id and a replay; labels a stranger false_positive; revokes nothing', async () => {
    const { key } = await issue();
    const body = alertBody(key);
    const signature = await github.sign(body);
    const other = await keyPair();
    for (const t of instances) {
      const tampered = await post(t, body.replace('abc123', 'abc124'), { 'github-public-key-identifier': 'k1', 'github-public-key-signature': signature });
      expect([tampered.status, tampered.body.field]).toEqual([400, 'github-public-key-signature']);
      const wrong = await post(t, body, { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await other.sign(body) });
      expect(wrong.status).toBe(400);
      const unknown = await signed(t, body, `unknown-${t.api.config.adapter}`);
      expect([unknown.status, unknown.body.field]).toEqual([400, 'github-public-key-identifier']);
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
