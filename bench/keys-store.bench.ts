/**
 * The API-key store side of verification:
 * 1. Cold verify (no cache): every verification goes to the store — memory, embedded
 *    PGlite, and PostgreSQL (TEST_DATABASE_URL; skipped with a message when none answers).
 * 2. lastUsedAt write amplification: 100 keys verified at ~10,000 requests/s for
 *    BENCH_LASTUSED_SECONDS (default 65) with the default 60 s interval, over a real
 *    PGlite store behind a counter. Target: at most 1 write per key per minute, and one
 *    round trip per flush for all keys together.
 *
 * Smoke mode (BENCH_SMOKE=1): 20 keys, 0.2 s of last-use traffic.
 *
 * Run: npx -y pnpm@10.34.9 bench keys-store
 */
import { PGlite } from '@electric-sql/pglite';
import { createKeyAdmin, createKeyring, createMemoryKeyStore, type KeyStore } from '@keyset/core';
import { createPostgresKeyStore, migrate } from '@keyset/postgres';
import pg from 'pg';
import { compare, save, setting, type Case } from './support.ts';

const PREFIX = 'acme_live';
const N_KEYS = setting('BENCH_KEYS', 1000, 20);
const LASTUSED_SECONDS = setting('BENCH_LASTUSED_SECONDS', 65, 0.2);
const RATE = 10_000;

async function coldCase(name: string, store: KeyStore): Promise<Case> {
  const keyring = createKeyring({ store, prefix: PREFIX, cache: false, lastUsed: false });
  const keys: string[] = [];
  for (let i = 0; i < N_KEYS; i++) keys.push((await createKeyAdmin(keyring).issue({ name: `svc-${i}`, scopes: ['orders:read'] })).key);
  let i = 0;
  return { name, fn: () => keyring.verify(keys[i++ % keys.length]!) };
}

const cases: Case[] = [await coldCase('cold verify, memory store', createMemoryKeyStore())];

const lite = await PGlite.create();
await migrate(lite);
cases.push(await coldCase('cold verify, PGlite store', createPostgresKeyStore({ client: lite })));

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pool = new pg.Pool({ connectionString: url, max: 4 });
const schema = `keyset_bench_${process.pid}`;
let pgReady = false;
try {
  await pool.query(`CREATE SCHEMA ${schema}`);
  await migrate(pool, { schema });
  cases.push(await coldCase('cold verify, PostgreSQL store (pg Pool)', createPostgresKeyStore({ client: pool, schema })));
  pgReady = true;
} catch (err) {
  console.warn(`PostgreSQL skipped: set TEST_DATABASE_URL to a reachable server (${(err as Error).message})`);
}

const cold = await compare(`cold API-key verification (no cache), ${N_KEYS} keys round-robin`, 'cold verify, memory store', cases, 2000);

// lastUsedAt: count what reaches the store.
const base = createPostgresKeyStore({ client: lite, tablePrefix: 'lu_' });
await migrate(lite, { tablePrefix: 'lu_' });
let flushes = 0;
const perDigest = new Map<string, number>();
const counted: KeyStore = {
  ...base,
  insertIdentity: (...a) => base.insertIdentity(...a),
  addSecret: (...a) => base.addSecret(...a),
  findByDigest: (...a) => base.findByDigest(...a),
  getIdentity: (...a) => base.getIdentity(...a),
  listIdentities: (...a) => base.listIdentities(...a),
  revoke: (...a) => base.revoke(...a),
  async touchLastUsed(updates) {
    flushes++;
    for (const u of updates) perDigest.set(u.digest, (perDigest.get(u.digest) ?? 0) + 1);
    return base.touchLastUsed(updates);
  },
};
const keyring = createKeyring({ store: counted, prefix: PREFIX });
const keys: string[] = [];
for (let i = 0; i < 100; i++) keys.push((await createKeyAdmin(keyring).issue({ name: `lu-${i}`, scopes: ['orders:read'] })).key);
console.log(`\nlastUsedAt: ${keys.length} keys at ~${RATE.toLocaleString('en-US')} req/s for ${LASTUSED_SECONDS} s (interval 60 s)…`);
const started = performance.now();
let verifications = 0;
while (performance.now() - started < LASTUSED_SECONDS * 1000) {
  const tickStart = performance.now();
  // 100 verifications per 10 ms tick = 10,000 per second.
  for (let j = 0; j < RATE / 100; j++) await keyring.verify(keys[verifications++ % keys.length]!);
  const spent = performance.now() - tickStart;
  // Always through the timer queue, even when a tick overran: a loop of microtasks alone
  // would starve the keyring's flush timer, and no write would ever be counted.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10 - spent)));
}
const seconds = (performance.now() - started) / 1000;
const writesDuringRun = [...perDigest.values()].reduce((a, b) => a + b, 0);
const flushesDuringRun = flushes;
await keyring.close(); // the final flush on shutdown
const maxPerKey = Math.max(...perDigest.values());
const lastUsed = {
  seconds: Number(seconds.toFixed(1)),
  requestsPerSecond: Math.round(verifications / seconds),
  verifications,
  keys: keys.length,
  storeRoundTripsDuringRun: flushesDuringRun,
  keyWritesDuringRun: writesDuringRun,
  writesPerKeyPerMinute: Number((writesDuringRun / keys.length / (seconds / 60)).toFixed(2)),
  maxWritesForOneKeyIncludingClose: maxPerKey,
};
console.table([lastUsed]);

save('keys-store', { cold, lastUsed });
await lite.close();
if (pgReady) await pool.query(`DROP SCHEMA ${schema} CASCADE`);
await pool.end();
