/**
 * What the largest signed secret-scanning alert the handler accepts costs (maxTokens, 256
 * tokens by default), on the PostgreSQL key store and revocation bus of a real server, with
 * two keyring instances (the second only listens and acknowledges, as another instance
 * does). Every statement the handler causes is counted through the pool (each store call is
 * one statement, its own transaction), and the wall time of the handler call is measured.
 * Cases: 256 distinct live keys (policy revoke), 256 distinct unknown well-formed keys,
 * 256 copies of one live key, 256 distinct malformed tokens.
 *
 * Run: TSX_TSCONFIG_PATH=tsconfig.json node --import tsx bench/leak-alert-cost.ts
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
 */
import { createKeyAdmin, createKeyring, createLeakAlertHandler, generateKey, type KeyAdmin } from '@keyset/core';
import { createPostgresKeyStore, createPostgresRevocationBus, migrate } from '@keyset/postgres';
import { generateKeyPairSync, sign as signWith } from 'node:crypto';
import pg from 'pg';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `keyset_bench_leaks_${process.pid}`;
const PREFIX = 'ks_live';
const TOKENS = 256;
const quiet = { warn() {}, error() {}, info() {} };

// GitHub signs alerts with ECDSA P-256 over SHA-256, the signature DER-encoded, as node:crypto gives it.
const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const sign = async (body: string): Promise<string> => signWith('sha256', Buffer.from(body), { key: pair.privateKey, dsaEncoding: 'der' }).toString('base64');

const pool = new pg.Pool({ connectionString: url, max: 10 });
let statements = 0;
const counted = { query: (text: string, params?: unknown[]) => (statements++, pool.query(text, params)) };
await migrate(pool, { schema });
const listeners: pg.Client[] = [];
const buses: { close(): Promise<void> }[] = [];
try {
  const keyrings = [0, 1].map(() => createKeyring({ store: createPostgresKeyStore({ client: counted, schema }), prefix: PREFIX, lastUsed: false, logger: quiet }));
  for (const keyring of keyrings) {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listeners.push(listener);
    const bus = createPostgresRevocationBus({ client: counted, listener, keyring, logger: quiet, channel: `leaks_${process.pid}` });
    await bus.ready;
    buses.push(bus);
  }
  const keyring = keyrings[0]!;
  const admin: KeyAdmin = createKeyAdmin(keyring);
  const handler = createLeakAlertHandler({ keyring, admin, publicKeys: { fetch: async () => [{ key_identifier: 'k1', key: pem }] }, logger: quiet });
  const issue = async (n: number): Promise<string[]> => Promise.all(Array.from({ length: n }, async () => (await admin.issue({ name: 'leaky', scopes: [] })).key));
  const cases: [string, () => Promise<string[]>][] = [
    [`${TOKENS} distinct live keys (policy revoke)`, () => issue(TOKENS)],
    [`${TOKENS} distinct unknown well-formed keys`, async () => Array.from({ length: TOKENS }, () => generateKey(PREFIX))],
    [`${TOKENS} copies of one live key`, async () => Array.from({ length: TOKENS }, () => '').fill((await issue(1))[0]!)],
    [`${TOKENS} distinct malformed tokens`, async () => Array.from({ length: TOKENS }, (_, i) => `${PREFIX}_${String(i).padStart(38, 'x')}`)],
  ];
  // Warm-up: the signing keys are fetched and imported once.
  await handler(new Request('http://bench/alerts', { method: 'POST', body: '[]', headers: { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await sign('[]') } }));
  console.log('case | status | body bytes | SQL statements (each its own transaction) | wall time (ms)');
  for (const [label, tokens] of cases) {
    const list = await tokens();
    const body = JSON.stringify(list.map((token, i) => ({ token, type: 'ks_live_key', url: `https://github.com/octo/app/blob/0123456789abcdef0123456789abcdef01234567/config/${i}.env`, source: 'content' })));
    const request = new Request('http://bench/alerts', { method: 'POST', body, headers: { 'github-public-key-identifier': 'k1', 'github-public-key-signature': await sign(body) } });
    const before = statements;
    const started = performance.now();
    const response = await handler(request);
    const ms = performance.now() - started;
    await response.text();
    console.log(`${label} | ${response.status} | ${body.length} | ${statements - before} | ${ms.toFixed(0)}`);
  }
} finally {
  for (const bus of buses) await bus.close();
  for (const listener of listeners) await listener.end();
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
}
